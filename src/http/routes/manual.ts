/**
 * The manual: the Markdown pages of docs/ served as HTML at /manual/<page>, so that a problem's `type`
 * (`/manual/errors#<code>`) resolves to the paragraph that explains its code.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Marked, type Tokens } from 'marked';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import { packagePath } from '../../package-files.ts';

export const MANUAL_PATH = '/manual';
const defaultDocsDir = packagePath('docs');

/** Pages first in the index, in reading order; any other page follows by name. */
const readingOrder = [
  'api',
  'errors',
  'mcp',
  'terminal',
  'operators',
  'billing',
  'collectors',
  'scale-out',
  'architecture',
  'benchmarks',
];
const pageName = /^[a-z0-9][a-z0-9-]*$/;
const imageTypes: Record<string, string> = { png: 'image/png', svg: 'image/svg+xml' };

const style = `
body{font:16px/1.55 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
nav{padding:.6rem 1.5rem;border-bottom:1px solid #d0d7de;font-size:.9rem}
nav a{margin-right:.9rem}
main{max-width:60rem;padding:1rem 1.5rem 4rem}
a{color:#0550ae}
code,pre{font:.875em/1.45 ui-monospace,monospace;background:#f6f8fa}
pre{padding:.8rem;overflow:auto}
table{border-collapse:collapse;display:block;overflow:auto}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;vertical-align:top;text-align:left}
img{max-width:100%}
:target{background:#fff8c5}
`;
// No script at all; the one inline stylesheet is allowed by its hash, not by 'unsafe-inline'.
const contentSecurityPolicy = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`,
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const unescapeHtml = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * GitHub's heading anchors (lower case, punctuation but `-` and `_` dropped, spaces to `-`), so a link
 * to `errors.md#not_entitled` works both on the repository's page and here.
 */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A link between pages (`api.md#cursors`) or to a picture beside them becomes a /manual/ address. */
function manualHref(href: string): string {
  const page = /^(?:\.\/)?([a-z0-9][a-z0-9-]*)\.md(#.*)?$/.exec(href);
  if (page) return `${MANUAL_PATH}/${page[1]}${page[2] ?? ''}`;
  const image = /^(?:\.\/)?([a-z0-9][a-z0-9-]*\.(?:png|svg))$/.exec(href);
  if (image) return `${MANUAL_PATH}/${image[1]}`;
  return href;
}

function renderMarkdown(markdown: string): { title: string; html: string } {
  const seen = new Map<string, number>();
  let title = '';
  const marked = new Marked({
    gfm: true,
    walkTokens(token) {
      if (token.type === 'link' || token.type === 'image') {
        (token as Tokens.Link | Tokens.Image).href = manualHref((token as Tokens.Link).href);
      }
    },
    renderer: {
      heading({ tokens, depth }) {
        const inner = this.parser.parseInline(tokens);
        const text = unescapeHtml(inner);
        if (depth === 1 && title === '') title = text;
        const base = headingId(text);
        const count = seen.get(base) ?? 0;
        seen.set(base, count + 1);
        const id = count === 0 ? base : `${base}-${count}`;
        return `<h${depth} id="${escapeHtml(id)}">${inner}</h${depth}>\n`;
      },
    },
  });
  return { title, html: marked.parse(markdown, { async: false }) };
}

function page(title: string, body: string, pages: readonly string[]): string {
  const nav = [`<a href="${MANUAL_PATH}/">Manual</a>`]
    .concat(pages.map((name) => `<a href="${MANUAL_PATH}/${name}">${escapeHtml(name)}</a>`))
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Token-metered data manual</title>
<style>${style}</style>
</head>
<body>
<nav aria-label="Manual pages">${nav}</nav>
<main>
${body}</main>
</body>
</html>
`;
}

interface Manual {
  pages: string[];
  images: Set<string>;
  rendered: Map<string, { title: string; html: string }>;
}

/**
 * GET /manual/ (the index) and GET /manual/<page>. Only names found in the docs folder are served, looked
 * up in its listing: a request never builds a path of its own.
 */
export function registerManualRoutes(app: TypedApp, docsDir: string = defaultDocsDir): void {
  let manual: Promise<Manual> | undefined;
  const load = (): Promise<Manual> => {
    manual ??= readdir(docsDir).then((files) => {
      const pages = files
        .filter((f) => f.endsWith('.md') && pageName.test(f.slice(0, -3)))
        .map((f) => f.slice(0, -3));
      const rank = (name: string) => {
        const i = readingOrder.indexOf(name);
        return i < 0 ? readingOrder.length : i;
      };
      pages.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
      const images = new Set(files.filter((f) => /^[a-z0-9][a-z0-9-]*\.(png|svg)$/.test(f)));
      return { pages, images, rendered: new Map() };
    });
    return manual;
  };
  const rendered = async (docs: Manual, name: string) => {
    let result = docs.rendered.get(name);
    if (!result) {
      result = renderMarkdown(await readFile(join(docsDir, `${name}.md`), 'utf8'));
      docs.rendered.set(name, result);
    }
    return result;
  };
  const config = { auth: 'none' as const, cache: 'public' as const };
  const schema = { hide: true, tags: ['operations'] };

  app.get(
    MANUAL_PATH,
    { config, exposeHeadRoute: true, schema: { ...schema, operationId: 'manualIndex' } },
    async (_request, reply) => {
      const docs = await load();
      const items: string[] = [];
      for (const name of docs.pages) {
        const { title } = await rendered(docs, name);
        items.push(`<li><a href="${MANUAL_PATH}/${name}">${escapeHtml(title || name)}</a></li>`);
      }
      const body = `<h1 id="manual">Token-metered data manual</h1>\n<ul>\n${items.join('\n')}\n</ul>\n`;
      return reply
        .header('content-security-policy', contentSecurityPolicy)
        .header('x-content-type-options', 'nosniff')
        .type('text/html; charset=utf-8')
        .send(page('Contents', body, docs.pages));
    },
  );

  app.get<{ Params: { page: string } }>(
    `${MANUAL_PATH}/:page`,
    { config, exposeHeadRoute: true, schema: { ...schema, operationId: 'manualPage' } },
    async (request, reply) => {
      const docs = await load();
      const name = request.params.page.endsWith('.md')
        ? request.params.page.slice(0, -3)
        : request.params.page;
      reply
        .header('content-security-policy', contentSecurityPolicy)
        .header('x-content-type-options', 'nosniff');
      if (docs.images.has(name)) {
        const type = imageTypes[name.slice(name.lastIndexOf('.') + 1)] as string;
        return reply.type(type).send(await readFile(join(docsDir, name)));
      }
      if (!docs.pages.includes(name)) {
        throw new AppError(
          'not_found',
          `There is no manual page ${JSON.stringify(request.params.page)}; the pages are listed at ${MANUAL_PATH}/.`,
        );
      }
      const { title, html } = await rendered(docs, name);
      return reply.type('text/html; charset=utf-8').send(page(title || name, html, docs.pages));
    },
  );
}
