/**
 * Answers one JSON-RPC message of an authenticated POST (route.ts), on one of four paths:
 *
 * - Direct (direct.ts): a plain tools/call of either era, once classified, run here and encoded as the
 *   SDK's codec of the era encodes it.
 * - Legacy exchange (legacy.ts): other 2025-era requests. Kept because the handler's own 2025 fallback
 *   answers over SSE, after the cost headers could be set, and builds a web Request and Response.
 * - Composed (composed.ts): a 2026-07-28 tools/call or tools/list whose headers agree with its body.
 * - createMcpHandler (modern-only): every 2026-07-28 request the paths above do not take.
 *
 * A tool returns its answer `{result, cost, raw}`; the route sends the result with the cost headers and
 * the raw parts spliced in (spliceRaw), encoding the message once.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  type InboundClassificationOutcome,
  isJsonContentType,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { jsonRpc } from '../errors.ts';
import { costHeaders } from '../views/cost.ts';
import { serveComposed } from './composed.ts';
import { type DirectCall, directAnswer, directToolCall } from './direct.ts';
import {
  claimsModernEra,
  isComposableModernRequest,
  isPlainLegacyRequest,
  ModernVerdicts,
  type StandardHeaders,
} from './eras.ts';
import { serveLegacyExchange } from './legacy.ts';
import type { AnswerSink, McpFace } from './server.ts';
import { type McpAnswer, spliceRaw, type ToolContext } from './tool-kit.ts';

/** What the SDK's servers of a request get in `authInfo.extra`: the call's context and its answer's sink. */
interface Bound {
  context: ToolContext;
  sink: AnswerSink;
}

/**
 * Where the tool answer of an SDK exchange waits for the route. Taking it lets go of it: a read's page
 * text (tens of KB) must not stay reachable from the SDK's objects of the exchange, which hold the sink
 * and are often still referenced from V8's old generation when a minor GC runs, so whatever they reach
 * is copied and promoted on the way to the next full GC.
 */
function answerSlot(): { sink: AnswerSink; take: () => McpAnswer | null } {
  let held: McpAnswer | null = null;
  return {
    sink: (answer) => {
      held = answer;
    },
    take: () => {
      const answer = held;
      held = null;
      return answer;
    },
  };
}

/**
 * An answer with raw parts, sent as the string it is: Node writes it with the headers in one write.
 * Fastify would add `; charset=utf-8` to the JSON type of a string it is given; passing the string
 * through as already serialised keeps the type as written (as the SDK writes it, and as it was when the
 * answer went out as bytes).
 */
function sendSpliced(reply: FastifyReply, text: string): FastifyReply {
  return reply.serializer(asIs).send(text);
}
const asIs = (payload: unknown) => payload as string;

/** A JSON-RPC answer encoded once: the cost headers of a metered call, the raw parts put back. */
function sendMessage(reply: FastifyReply, message: object, answer: McpAnswer | null): FastifyReply {
  if (answer?.cost) reply.headers(costHeaders(answer.cost));
  else if (answer?.replayed) reply.headers(answer.replayed);
  const serialized = JSON.stringify(message);
  reply.type('application/json');
  return answer?.raw ? sendSpliced(reply, spliceRaw(serialized, answer.raw)) : reply.send(serialized);
}

/** Headers the SDK reads; credentials and cookies stay at the edge. */
function forwardedHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === 'content-type' || name === 'last-event-id' || name.startsWith('mcp-')) {
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }
  // The route has refused an Accept that admits no JSON; the SDK's transport wants both listed.
  headers.set('accept', 'application/json, text/event-stream');
  return headers;
}

function standardHeaders(request: FastifyRequest): StandardHeaders {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return {
    protocolVersion: header('mcp-protocol-version'),
    method: header('mcp-method'),
    name: header('mcp-name'),
  };
}

/** The SDK's classification of a message. */
const sdkClassification = (body: unknown, headers: StandardHeaders): InboundClassificationOutcome =>
  classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: headers.protocolVersion,
    mcpMethodHeader: headers.method,
    mcpNameHeader: headers.name,
    body,
  });

/** The SDK's own Response (createMcpHandler, or a composed exchange it answered itself), passed on. */
async function passResponse(reply: FastifyReply, response: Response, answer: McpAnswer | null) {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value);
  });
  if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // Only a 2026-07-28 subscriptions/listen streams here; with no list that changes, the SDK
    // acknowledges it and ends the stream at once. Passed through, never buffered.
    return reply.send(Readable.fromWeb(response.body as WebReadableStream));
  }
  if (answer?.cost) reply.headers(costHeaders(answer.cost));
  if (answer?.raw) return sendSpliced(reply, spliceRaw(await response.text(), answer.raw));
  // Nothing to put back: the bytes as the SDK encoded them.
  const payload = Buffer.from(await response.arrayBuffer());
  return payload.length > 0 ? reply.send(payload) : reply.send();
}

export interface McpAnswerer {
  /**
   * Answers one message: the route's own, and a tools/call the edge refused (`context.refusal`), which
   * goes the same way so that it is encoded for its era like any other tool result.
   */
  answer(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    context: ToolContext,
  ): Promise<FastifyReply>;
  close(): Promise<void>;
}

export function createAnswerer(face: McpFace, log: FastifyBaseLogger): McpAnswerer {
  const modern = createMcpHandler(
    (ctx) => {
      const bound = ctx.authInfo?.extra?.bound as Bound | undefined;
      // The route binds every request; a server without its context would serve unmetered.
      if (!bound) throw new Error('MCP request without an authenticated call');
      return face.serverFor(bound.context, bound.sink);
    },
    { legacy: 'reject', onerror: (error) => log.debug({ err: error }, 'MCP request rejected') },
  );

  /** A direct tools/call: the tool runs here; a fault it did not answer is an internal error. */
  async function direct(
    reply: FastifyReply,
    call: DirectCall,
    era: 'legacy' | 'modern',
    context: ToolContext,
  ) {
    let answer: McpAnswer;
    try {
      answer = await call.run(call.args, context);
    } catch (error) {
      // Tools answer their own faults as refused results. Anything else: an internal error with the
      // request's id, as the SDK answers a handler that throws (without its message).
      context.logError(error);
      const internal = { code: jsonRpc.internalError, message: 'Internal error' };
      return sendMessage(reply.code(200), { jsonrpc: '2.0', id: call.id, error: internal }, null);
    }
    return sendMessage(reply.code(200), directAnswer(call.id, answer.result, era, face.serverInfo), answer);
  }

  const verdicts = new ModernVerdicts(sdkClassification);
  /** The SDK's classification of a message, or null for a plain 2025-era call, which needs none. */
  function classify(body: unknown, headers: StandardHeaders): InboundClassificationOutcome | null {
    if (!claimsModernEra(body) && isPlainLegacyRequest(body, headers.protocolVersion)) return null;
    return verdicts.classify(body, headers);
  }

  async function answer(request: FastifyRequest, reply: FastifyReply, body: unknown, context: ToolContext) {
    const slot = answerSlot();
    // The credential was verified at the edge; the SDK gets the call's context, never the secret.
    const caller = context.caller;
    const authInfo: AuthInfo = {
      token: '',
      clientId: caller.key?.id ?? caller.account?.id ?? caller.wallet.id,
      scopes: [],
      extra: { bound: { context, sink: slot.sink } satisfies Bound },
    };
    const headers = standardHeaders(request);
    const outcome = classify(body, headers);
    if (outcome === null) {
      const legacyCall = directToolCall(body, 'legacy', face.toolCall);
      if (legacyCall) return direct(reply, legacyCall, 'legacy', context);
    }
    if (outcome === null || outcome.kind === 'legacy') {
      const server = face.serverFor(context, slot.sink);
      const exchange = await serveLegacyExchange(server, body, headers, authInfo);
      if (exchange.status === 202) return reply.code(202).send();
      return sendMessage(reply.code(exchange.status), exchange.message, slot.take());
    }
    const composable =
      isJsonContentType(request.headers['content-type']) && isComposableModernRequest(outcome, headers);
    const modernCall = composable ? directToolCall(outcome.message, 'modern', face.toolCall) : null;
    if (modernCall) return direct(reply, modernCall, 'modern', context);
    const composed = composable
      ? await serveComposed(face.serverFor(context, slot.sink, 'modern'), outcome, authInfo)
      : null;
    if (composed && 'message' in composed) return sendMessage(reply.code(200), composed.message, slot.take());
    // The SDK reads only the headers and the parsed body: the host part of this URL is never used.
    const response =
      composed?.response ??
      (await modern.fetch(
        new Request(`http://localhost${request.url}`, { method: 'POST', headers: forwardedHeaders(request) }),
        { parsedBody: body, authInfo },
      ));
    return passResponse(reply, response, slot.take());
  }

  return { answer, close: () => modern.close() };
}
