/**
 * The assistant with a chat-completions model: a local HTTP server that speaks the OpenAI protocol with
 * scripted tool-call replies. The adapter completes (and meters every read it triggers), answers a
 * malformed call with an error the model can correct, refuses a dataset the user may not read, and never
 * shows the model a key or another account's data.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import type { AnalysisSpec } from '../../src/domain/analysis/spec.ts';
import { balanceOf, freshIp, operatorAccount } from '../helpers/operator.ts';
import { assertLedgerBalanced, bearer, startServer, type TestServer } from '../helpers/server.ts';

interface Reply {
  content?: string | null;
  calls?: { name: string; arguments: string }[];
  finish_reason?: string;
}

/** A chat-completions endpoint that answers each request with the next scripted reply. */
class ScriptedModel {
  server: Server;
  script: Reply[] = [];
  requests: {
    headers: IncomingHttpHeaders;
    body: {
      model: string;
      messages: { role: string; content: string | null; tool_call_id?: string }[];
      tools: { function: { name: string } }[];
    };
  }[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => {
        raw += chunk;
      });
      req.on('end', () => {
        this.requests.push({ headers: req.headers, body: JSON.parse(raw) });
        const next = this.script.shift();
        if (!next) {
          res.writeHead(500).end('script ran out');
          return;
        }
        const calls = next.calls?.map((c, i) => ({
          id: `call_${this.requests.length}_${i}`,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            model: 'scripted',
            // Some servers say "stop" on a tool turn: the adapter goes by the calls, not the reason.
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: next.content ?? null,
                  ...(calls && { tool_calls: calls }),
                },
                finish_reason: next.finish_reason ?? (calls ? 'tool_calls' : 'stop'),
              },
            ],
          }),
        );
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/chat/completions`;
  }

  /** The tool messages the adapter sent back, in order. */
  toolReplies(): { tool_call_id?: string; content: string | null }[] {
    return (this.requests.at(-1)?.body.messages ?? []).filter((m) => m.role === 'tool');
  }
}

const spec: AnalysisSpec = {
  series: [
    { id: 'aapl', dataset: 'stocks/prices', entity: { symbol: 'AAPL' }, field: 'close' },
    { id: 'msft', dataset: 'stocks/prices', entity: { symbol: 'MSFT' }, field: 'close' },
  ],
  steps: [{ op: 'ratio', inputs: ['aapl', 'msft'], as: 'ratio' }],
  outputs: [{ kind: 'line', values: ['ratio'] }],
};

const MODEL_KEY = 'sk-operator-model-key-0123456789';

let model: ScriptedModel;
let server: TestServer;
before(async () => {
  model = new ScriptedModel();
  const url = await model.listen();
  server = await startServer({
    env: { ASSISTANT_URL: url, ASSISTANT_MODEL: 'scripted', ASSISTANT_API_KEY: MODEL_KEY },
  });
});
// Every balance equals the sum of its entries after every scenario.
afterEach(() => assertLedgerBalanced(server));
after(async () => {
  await assertLedgerBalanced(server);
  await server.close();
  await new Promise((resolve) => model.server.close(resolve));
});

async function workbench(tokens?: number) {
  const account =
    tokens === undefined
      ? await operatorAccount(server, { pkg: 'workbench' })
      : await operatorAccount(server, { tokens });
  if (tokens !== undefined) await server.deps.store.updateAccount(account.id, { packageId: 'workbench' });
  const login = await server.request('POST', '/api/v1/auth/login', {
    body: { email: account.email, password: account.password, client: 'terminal' },
    headers: { 'x-forwarded-for': freshIp() },
  });
  assert.equal(login.status, 200, login.text);
  return { ...account, terminal: login.json.token as string };
}

describe('the chat-completions planner completes', () => {
  test('completes: describes, corrects a malformed call, reads and runs, every read metered', async () => {
    const wb = await workbench();
    model.requests = [];
    model.script = [
      { calls: [{ name: 'describe_dataset', arguments: '{"dataset":"stocks/prices"}' }] },
      // Not JSON: the adapter says so, and the model tries again.
      {
        calls: [
          { name: 'read_dataset', arguments: '{"dataset": "stocks/prices", "filters": {symbol: AAPL}' },
        ],
      },
      {
        calls: [
          {
            name: 'read_dataset',
            arguments: '{"dataset":"stocks/prices","filters":{"symbol":"AAPL"},"limit":5}',
          },
        ],
        finish_reason: 'stop',
      },
      { calls: [{ name: 'run_analysis', arguments: JSON.stringify({ name: 'AAPL over MSFT', spec }) }] },
      { content: 'Read AAPL and MSFT closes and took their ratio.' },
    ];
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: { ...bearer(wb.terminal), 'x-request-id': 'req-chat-1' },
      body: { question: 'How has AAPL done against MSFT?', save: true },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'analysis');
    assert.equal(res.json.planner, 'chat');
    assert.equal(res.json.analysis.name, 'AAPL over MSFT');
    assert.deepEqual(res.json.analysis.spec, spec);
    assert.match(
      res.json.explanation,
      /^Read AAPL and MSFT closes and took their ratio\. It made 3 metered reads/,
    );
    // One read by the model (2 tokens × 1.35) and two by the analysis.
    assert.equal(res.json.tokens_burned, '8.1');
    assert.equal(res.json.reads, 3);
    assert.equal(await balanceOf(server, wb.terminal), '249991.9');
    const usage = await server.deps.store.listUsage({ accountId: wb.id }, null, 10);
    assert.deepEqual(usage.map((u) => [u.requestId, u.channel, u.burnedMicros]).reverse(), [
      ['req-chat-1.t1', 'terminal', 2_700_000n],
      ['req-chat-1.r2.aapl', 'terminal', 2_700_000n],
      ['req-chat-1.r2.msft', 'terminal', 2_700_000n],
    ]);

    const [malformed, read] = model.toolReplies().slice(1, 3);
    assert.match(malformed?.content ?? '', /"code":"invalid_arguments".*not valid JSON/);
    const rows = JSON.parse(read?.content ?? '{}');
    assert.equal(rows.tokensBurned, '2.7');
    assert.ok(rows.rows.length > 0 && rows.rows.every((r: { symbol: string }) => r.symbol === 'AAPL'));

    // The transcript is saved with the analysis: the question, each call and each tool answer.
    const saved = await server.request('GET', `/api/v1/analyses/${res.json.analysis.id}`, {
      headers: bearer(wb.terminal),
    });
    const roles = saved.json.transcript.map((m: { role: string }) => m.role);
    assert.deepEqual(roles, [
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    assert.equal(saved.json.planner, 'chat');

    // The model sees the operator's key in its own header, and never the user's credentials.
    for (const { headers, body } of model.requests) {
      assert.equal(headers.authorization, `Bearer ${MODEL_KEY}`);
      assert.equal(body.model, 'scripted');
      const text = JSON.stringify(body);
      assert.ok(
        !text.includes(wb.terminal) && !text.includes(wb.key) && !text.includes(wb.id),
        'no credential or account id',
      );
    }
    assert.deepEqual(
      model.requests[0]?.body.tools.map((t) => t.function.name),
      ['search_datasets', 'describe_dataset', 'estimate_cost', 'read_dataset', 'run_analysis', 'ask_user'],
    );
  });
});

describe('the chat-completions planner refuses', () => {
  test('refuses a dataset the user may not read, and one the wallet cannot pay: nothing charged', async () => {
    const wb = await workbench(3);
    model.requests = [];
    model.script = [
      { calls: [{ name: 'read_dataset', arguments: '{"dataset":"admin/accounts"}' }] },
      // 5 tokens × 1.35 from the Terminal, with 3 in the wallet.
      {
        calls: [
          {
            name: 'read_dataset',
            arguments: '{"dataset":"macro/treasury-yield-series","filters":{"tenor":"10 Yr"}}',
          },
        ],
      },
      // A spec that does not fit the schema is answered like a malformed call.
      { calls: [{ name: 'run_analysis', arguments: '{"name":"x","spec":{"series":[]}}' }] },
      {
        calls: [
          {
            name: 'ask_user',
            arguments: '{"question":"Which Treasury tenor?","candidates":["10 Yr","2 Yr"]}',
          },
        ],
      },
    ];
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'Show me the accounts table and the 10-year yield' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      kind: 'clarify',
      planner: 'chat',
      reason: 'ask_back',
      message: 'Which Treasury tenor?',
      candidates: [
        { label: '10 Yr', value: '10 Yr' },
        { label: '2 Yr', value: '2 Yr' },
      ],
      tokens_burned: '0',
      reads: 0,
    });
    const replies = model.toolReplies().map((m) => JSON.parse(m.content ?? '{}').error?.code);
    assert.deepEqual(replies, ['dataset_not_found', 'insufficient_tokens', 'invalid_arguments']);
    assert.equal(await balanceOf(server, wb.terminal), '3');
    assert.deepEqual(await server.deps.store.listUsage({ accountId: wb.id }, null, 10), []);
  });
});

describe('a model that does not settle', () => {
  test('a model that never settles is stopped after 8 turns and asks the user to rephrase', async () => {
    const wb = await workbench();
    model.script = Array.from({ length: 8 }, () => ({
      calls: [{ name: 'search_datasets', arguments: '{"query":"stock prices"}' }],
    }));
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'Tell me everything' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'clarify');
    assert.match(res.json.message, /did not settle on an analysis in 8 turns/);
    assert.equal(model.script.length, 0);
  });

  test('a model that reads and then asks back charges nothing: its reads refunded, not a run of the day', async () => {
    const wb = await workbench();
    model.script = [
      {
        calls: [
          {
            name: 'read_dataset',
            arguments: '{"dataset":"stocks/prices","filters":{"symbol":"AAPL"},"limit":5}',
          },
        ],
      },
      {
        calls: [
          { name: 'ask_user', arguments: '{"question":"Which field of AAPL?","candidates":["close"]}' },
        ],
      },
    ];
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: { ...bearer(wb.terminal), 'x-request-id': 'ask-back' },
      body: { question: 'AAPL please' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'clarify');
    assert.equal(res.json.message, 'Which field of AAPL? (The 1 read made while planning was refunded.)');
    assert.equal(res.json.tokens_burned, '0');
    assert.equal(await balanceOf(server, wb.terminal), '250000');
    const entries = (await server.deps.store.listEntries(wb.walletId)).filter(
      (e) => e.kind !== 'monthly_credit',
    );
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amountMicros, e.requestId]),
      [
        ['burn', -2_700_000n, 'ask-back.t1'],
        ['refund', 2_700_000n, 'ask-back.t1'],
      ],
    );
    assert.equal(await server.deps.store.countAnalysisRuns(wb.id, 0), 0);
  });
});

describe('a model that fails', () => {
  test('a model that cannot answer is a 503 with Retry-After; nothing is charged', async () => {
    const wb = await workbench();
    model.script = [];
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: bearer(wb.terminal),
      body: { question: 'compare AAPL and MSFT' },
    });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json.code, 'service_unavailable');
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(await balanceOf(server, wb.terminal), '250000');
  });

  test('a model that fails after its reads is a 503, and the reads it made are refunded', async () => {
    const wb = await workbench();
    model.script = [
      {
        calls: [
          {
            name: 'read_dataset',
            arguments: '{"dataset":"stocks/prices","filters":{"symbol":"AAPL"},"limit":5}',
          },
        ],
      },
      // Then the script runs out: the model answers 500, the question fails.
    ];
    const res = await server.request('POST', '/api/v1/assistant/ask', {
      headers: { ...bearer(wb.terminal), 'x-request-id': 'ask-failed' },
      body: { question: 'compare AAPL and MSFT' },
    });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json.code, 'service_unavailable');
    assert.match(res.json.detail, /The question's 1 read already charged \(2\.7 tokens\) was refunded\./);
    assert.equal(await balanceOf(server, wb.terminal), '250000');
    const entries = (await server.deps.store.listEntries(wb.walletId)).filter(
      (e) => e.kind !== 'monthly_credit',
    );
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amountMicros, e.requestId]),
      [
        ['burn', -2_700_000n, 'ask-failed.t1'],
        ['refund', 2_700_000n, 'ask-failed.t1'],
      ],
    );
    const usage = await server.deps.store.listUsage({ accountId: wb.id }, null, 10);
    assert.deepEqual(usage.map((u) => u.outcome).sort(), ['charged', 'refunded']);
  });
});
