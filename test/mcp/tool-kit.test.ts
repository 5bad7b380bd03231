/** defineTool: a tool returns its answer {result, cost, raw}; refusals, paid faults and retries too. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import type { Caller } from '../../src/domain/caller.ts';
import type { Idempotency, StoredResponse } from '../../src/domain/idempotency.ts';
import { AppError } from '../../src/errors.ts';
import { ChargedFault, defineTool, type ToolContext } from '../../src/mcp/tool-kit.ts';
import type { CostView } from '../../src/views/cost.ts';
import { rawPart } from '../../src/views/raw-parts.ts';

const cost: CostView = {
  token_cost: '2',
  tokens_burned: '2',
  cost_eur: '0.2',
  credits_remaining: '98',
  outcome: 'charged',
};

const logged: unknown[] = [];
const context = (extra: Partial<ToolContext> = {}): ToolContext => ({
  caller: {} as Caller,
  requestId: 'req_1',
  logError: (error) => logged.push(error),
  ...extra,
});

function tool(metered: boolean, run: () => Promise<unknown>) {
  return defineTool({
    name: 'a_tool',
    title: 'A tool',
    description: 'For the test.',
    metered,
    input: z.strictObject({ n: z.int().optional() }),
    output: z.object({}),
    run: run as never,
  });
}

test('a free tool answers its result with no cost and no raw parts', async () => {
  const result = { content: [{ type: 'text' as const, text: 'hi' }] };
  assert.deepEqual(await tool(false, async () => result).call({}, context()), {
    result,
    cost: null,
    raw: null,
  });
});

test('a metered tool answers its cost and raw parts as it returned them', async () => {
  const part = rawPart('[1]');
  const answer = {
    result: { content: [], structuredContent: { data: part.placeholder } },
    cost,
    raw: [part],
  };
  assert.deepEqual(await tool(true, async () => answer).call({ n: 1 }, context()), answer);
});

test('bad arguments and AppErrors are refusals that charged nothing', async () => {
  const bad = await tool(true, async () => assert.fail('ran')).call({ n: 'x' }, context());
  assert.equal(bad.cost, null);
  assert.equal(bad.result.isError, true);
  assert.match(
    (bad.result.content[0] as { text: string }).text,
    /^Refused: invalid_request \(400\)\. Invalid arguments for a_tool: n: .* Nothing was charged\.$/,
  );
  const refused = await tool(true, async () => {
    throw new AppError('insufficient_tokens', 'Not enough tokens.');
  }).call({}, context());
  assert.deepEqual(refused.result.content, [
    { type: 'text', text: 'Refused: insufficient_tokens (402). Not enough tokens. Nothing was charged.' },
  ]);
});

test('a fault of ours after the call was paid keeps its cost and says it was charged', async () => {
  logged.length = 0;
  const fault = new Error('encoding broke');
  const answer = await tool(true, async () => {
    throw new ChargedFault(fault, cost);
  }).call({}, context());
  assert.deepEqual(logged, [fault]);
  assert.equal(answer.cost, cost);
  assert.equal(
    (answer.result.content[0] as { text: string }).text,
    'Refused: internal_error (500). Something went wrong on our side; the request id helps us find it. The read was charged (see the cost headers).',
  );
});

test('with an idempotency key, the first answer is kept spliced; a retry replays it with its headers', async () => {
  const kept = new Map<string, StoredResponse>();
  const service = {
    async run(_caller: Caller, key: string, _fingerprint: string, work: () => Promise<StoredResponse>) {
      const found = kept.get(key);
      if (found) return { response: found, replayed: true };
      const response = await work();
      kept.set(key, response);
      return { response, replayed: false };
    },
  } as unknown as Idempotency;
  let runs = 0;
  const metered = tool(true, async () => {
    runs++;
    const part = rawPart('[{"a":1}]');
    return { result: { content: [], structuredContent: { data: part.placeholder } }, cost, raw: [part] };
  });
  const idempotent = { key: 'k1', service };
  const first = await metered.call({}, context({ idempotent }));
  assert.deepEqual(first, {
    result: { content: [], structuredContent: { data: [{ a: 1 }] } },
    cost,
    raw: null,
  });
  const again = await metered.call({}, context({ idempotent }));
  assert.equal(runs, 1);
  assert.deepEqual(again, {
    result: { content: [], structuredContent: { data: [{ a: 1 }] } },
    cost: null,
    raw: null,
    replayed: {
      'x-token-cost': '2',
      'x-request-tokens': '2',
      'x-request-cost-eur': '0.2',
      'x-credits-remaining': '98',
      'idempotent-replayed': 'true',
    },
  });
});
