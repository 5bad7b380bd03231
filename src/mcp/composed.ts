/**
 * The composed path: a 2026-07-28 tools/call or tools/list whose headers agree with its body, served on
 * the SDK's PerRequestHTTPServerTransport with the result handed out as a message. Kept because
 * skipping the web Request and Response measurably cuts a modern read's service CPU (docs/benchmarks.md).
 */
import {
  type AuthInfo,
  type InboundClassificationOutcome,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  PerRequestHTTPServerTransport,
  type PerRequestHTTPServerTransportOptions,
  type Server,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { MODERN_REVISION } from './server.ts';

/**
 * The SDK's per-request transport, handing the exchange's result out as the message itself: the route
 * encodes it once, with the stored rows spliced in (spliceRaw), so the web Response the SDK would build
 * around it, and the read of its bytes back, are skipped. A protocol error (with the HTTP status the SDK
 * gives it), and every message of an exchange that a notification has turned into an SSE stream, go
 * through the SDK's own send unchanged.
 */
class ResultTransport extends PerRequestHTTPServerTransport {
  readonly #requestId: string | number;
  #resolve!: (message: JSONRPCResultResponse) => void;
  /** The result of the exchange, when it is one the route encodes; never settles otherwise. */
  readonly result = new Promise<JSONRPCResultResponse>((resolve) => {
    this.#resolve = resolve;
  });
  #answered = false;
  #delegated = false;

  constructor(
    classification: PerRequestHTTPServerTransportOptions['classification'],
    requestId: string | number,
  ) {
    super({ classification });
    this.#requestId = requestId;
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#answered) return;
    // The protocol layer sends one well-formed response per request: no schema check is needed here.
    if (!this.#delegated && 'result' in message && message.id === this.#requestId) {
      this.#answered = true;
      this.#resolve(message);
      // As the SDK's send does after a terminal answer: the exchange ends once its answer is out.
      queueMicrotask(() => void this.close());
      return;
    }
    this.#delegated = true;
    return super.send(message, options);
  }

  /**
   * Closing the exchange makes the SDK build SdkErrors that nobody reads once the answer is out: the
   * protocol layer's teardown signal, and the rejection of the web Response this transport did not
   * build. They are built without a stack trace, which cost more than the rest of the close (about
   * 20 µs a call); the setting is restored before close returns (close runs synchronously).
   */
  override close(): Promise<void> {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return super.close();
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** What the composed path answers: a result for the route to encode, or the SDK's own response. */
export type ComposedAnswer = { message: JSONRPCResultResponse } | { response: Response };

/**
 * One modern exchange on the composed path: connecting the request's server to the SDK's per-request
 * transport binds it to the classified revision (the SDK's documented behaviour); the transport then
 * answers as createMcpHandler does. Null when the server did not bind, so the caller can hand the
 * request to createMcpHandler instead of serving it in the wrong era.
 */
export async function serveComposed(
  server: Server,
  outcome: InboundClassificationOutcome & { kind: 'modern'; message: JSONRPCRequest },
  authInfo: AuthInfo,
): Promise<ComposedAnswer | null> {
  const transport = new ResultTransport(outcome.classification, outcome.message.id);
  await server.connect(transport);
  if (server.getNegotiatedProtocolVersion() !== MODERN_REVISION) {
    await server.close();
    return null;
  }
  // Once the result is out, the transport's close rejects the Response promise; the race has settled.
  return Promise.race([
    transport.result.then((message) => ({ message })),
    transport.handleMessage(outcome.message, { authInfo }).then((response) => ({ response })),
  ]);
}
