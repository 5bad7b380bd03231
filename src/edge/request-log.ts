/** The request log: one line per request, with credentials masked. */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { keyShapes } from '../domain/keys.ts';

const maskShapes = (text: string, secrets: readonly string[]) => {
  let masked = text
    .replace(keyShapes, '$1[redacted]')
    .replace(/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, '[redacted-jwt]');
  for (const secret of secrets) masked = masked.replaceAll(secret, '[redacted]');
  return masked;
};

/**
 * A URL with anything shaped like a key or a session JWT, and each of the operator's own `secrets`
 * (ADMIN_TOKEN, METRICS_TOKEN, which have no shape of their own), replaced, for the logs. The query
 * parser decodes %-escapes, so a key sent as `tmd_live%5F…` is still that key: the URL is searched with
 * its ASCII escapes decoded too, and when that form hides a credential it is the one logged, masked.
 */
export function maskCredentials(url: string, secrets: readonly string[] = []): string {
  // Every request's URL passes here and nearly none holds a credential: substring checks first.
  if (
    !url.includes('%') &&
    !url.includes('tmd_') &&
    !url.includes('eyJ') &&
    !secrets.some((secret) => url.includes(secret))
  ) {
    return url;
  }
  const masked = maskShapes(url, secrets);
  const decoded = url.replace(/%[0-7][0-9A-Fa-f]/g, (hex) =>
    String.fromCharCode(Number.parseInt(hex.slice(1), 16)),
  );
  if (decoded === url) return masked;
  const maskedDecoded = maskShapes(decoded, secrets);
  return maskedDecoded === decoded ? masked : maskedDecoded;
}

/** What the request log says of a request. */
const requestLine = (request: FastifyRequest, reply: FastifyReply) => ({
  req: request,
  res: { statusCode: reply.statusCode },
  responseTime: reply.elapsedTime,
  // Which key (its id, never its secret), when the request presented one that resolved.
  keyId: request.caller?.key?.id,
});

/**
 * The request log: one line per request, written when it ends, with what an operator looks for in one
 * place (method, masked URL, client, status, time, key id), instead of Fastify's two lines (the second
 * without the URL).
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) reply.log.error({ ...requestLine(request, reply), err: error }, 'request errored');
    else reply.log.info(requestLine(request, reply), 'request completed');
  }

  /**
   * A streamed response (an export) that ended before it was whole: the client hung up, or the stream
   * broke (a store failure, a shutdown). Its one line, as no `request completed` follows.
   */
  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') {
      reply.log.info(requestLine(request, reply), 'request ended before its response was complete');
    } else {
      reply.log.warn({ ...requestLine(request, reply), err: error }, 'response broken off');
    }
  }
}
