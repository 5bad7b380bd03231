/**
 * How to connect, per client, each in that client's own syntax: a command or config that works when
 * pasted. The key stays in an environment variable (or the client's secret prompt), never in the text.
 */
import { useState } from 'preact/hooks';

export interface Snippet {
  id: string;
  label: string;
  /** Where it goes, in a sentence. */
  where: string;
  text: string;
}

export function connectSnippets(base: string, mcp: string): Snippet[] {
  return [
    {
      id: 'curl',
      label: 'curl',
      where: 'A shell with TMD_KEY set. --fail-with-body makes a refused read (401, 402, 429) fail loudly.',
      text: `curl -sS --fail-with-body -D - -H "Authorization: Bearer $TMD_KEY" \\\n  "${base}/api/v1/data/equities/stock-prices?symbol=AAPL&limit=5"`,
    },
    {
      id: 'claude-code',
      label: 'Claude Code',
      where:
        'A shell with TMD_KEY set (the shell puts the key in). Or leave out --header and sign in with /mcp.',
      text: `claude mcp add --transport http tmd ${mcp} \\\n  --header "Authorization: Bearer $TMD_KEY"`,
    },
    {
      id: 'cursor',
      label: 'Cursor',
      where:
        '~/.cursor/mcp.json (or .cursor/mcp.json in a project); Cursor reads TMD_KEY from its environment.',
      text: JSON.stringify(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Cursor expands ${env:TMD_KEY} itself
        { mcpServers: { tmd: { url: mcp, headers: { Authorization: 'Bearer ${env:TMD_KEY}' } } } },
        null,
        2,
      ),
    },
    {
      id: 'vscode',
      label: 'VS Code',
      where: '.vscode/mcp.json; VS Code asks for the key once and keeps it in its secret storage.',
      text: JSON.stringify(
        {
          inputs: [{ type: 'promptString', id: 'tmd-key', description: 'TMD API key', password: true }],
          // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code expands ${input:tmd-key} itself
          servers: { tmd: { type: 'http', url: mcp, headers: { Authorization: 'Bearer ${input:tmd-key}' } } },
        },
        null,
        2,
      ),
    },
    {
      id: 'claude-desktop',
      label: 'Claude Desktop',
      where:
        'Settings → Connectors → Add custom connector, with this URL: Claude signs in and you approve it here (no key).',
      text: mcp,
    },
  ];
}

export function ConnectSnippets({ base, mcp }: { base: string; mcp: string }) {
  const snippets = connectSnippets(base, mcp);
  const [chosen, setChosen] = useState(snippets[0]?.id ?? 'curl');
  const [copied, setCopied] = useState<string | null>(null);
  const snippet = snippets.find((s) => s.id === chosen) ?? snippets[0];
  if (!snippet) return null;
  return (
    <section aria-labelledby="connect-title">
      <h2 id="connect-title">Connect</h2>
      <p>
        Base URL <code>{base}</code> · MCP URL <code>{mcp}</code>. Put your key in <code>TMD_KEY</code>.
      </p>
      <fieldset class="row plain">
        <legend class="visually-hidden">Client</legend>
        {snippets.map((s) => (
          <button
            key={s.id}
            type="button"
            class={s.id === chosen ? undefined : 'secondary'}
            aria-pressed={s.id === chosen}
            onClick={() => {
              setChosen(s.id);
              setCopied(null);
            }}
          >
            {s.label}
          </button>
        ))}
      </fieldset>
      <p class="muted">{snippet.where}</p>
      <pre data-testid="connect-snippet">{snippet.text}</pre>
      <button
        type="button"
        class="secondary"
        onClick={() => {
          navigator.clipboard?.writeText(snippet.text).then(
            () => setCopied(snippet.id),
            () => setCopied(null),
          );
        }}
      >
        {copied === snippet.id ? `${snippet.label}: copied` : `Copy for ${snippet.label}`}
      </button>
    </section>
  );
}
