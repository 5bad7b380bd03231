/** Renders every error as RFC 9457 problem+json. No stack trace or internal message reaches a client. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, errorCatalogue, toProblem } from '../errors.ts';

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.enum(
      Object.keys(errorCatalogue) as [keyof typeof errorCatalogue, ...(keyof typeof errorCatalogue)[]],
    ),
    request_id: z.string(),
    retry_after: z.int().optional(),
    required_tokens: z.string().optional(),
    balance: z.string().optional(),
    suggestions: z.array(z.string()).optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .passthrough()
  .describe('RFC 9457 problem details; `code` is stable and listed in the README.');

const problemCodes = new WeakMap<FastifyReply, string>();

/** The code of the problem a reply was answered with, if any (for the refusal metrics). */
export const problemCodeOf = (reply: FastifyReply): string | undefined => problemCodes.get(reply);

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  problemCodes.set(reply, error.code);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/problem+json; charset=utf-8')
    .send(JSON.stringify(toProblem(error, String(reply.request.id))));
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: { issue?: { path?: PropertyKey[] } } & Record<string, unknown>;
}

/** Maps framework and parser failures onto the catalogue; anything unknown is a logged 500. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const fe = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation) {
    const errors = fe.validation.map((issue) => ({
      path: [
        fe.validationContext,
        ...((issue.params?.issue as { path?: PropertyKey[] } | undefined)?.path ??
          issue.instancePath?.split('/').filter(Boolean) ??
          []),
      ]
        .map(String)
        .filter((p) => p !== undefined && p !== '')
        .join('.'),
      message: issue.message ?? 'is invalid',
    }));
    const first = errors[0];
    const detail = first ? `${first.path || 'request'}: ${first.message}` : 'The request is invalid.';
    return new AppError('invalid_request', detail, { errors });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('malformed_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Send the request body as application/json.');
    case 'TMD_FORBIDDEN_JSON_KEY':
      return new AppError(
        'invalid_request',
        'The request body holds a __proto__ or constructor.prototype key, which this service refuses.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new AppError('invalid_request', 'The URL is not valid.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('invalid_request', 'A part of the URL path is longer than 200 characters.');
  }
  if (error instanceof SyntaxError)
    return new AppError('malformed_json', 'The request body is not valid JSON.');
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return new AppError('payload_too_large', 'The request body is too large.');
    if (fe.statusCode === 415)
      return new AppError('unsupported_media_type', 'Send the request body as application/json.');
    return new AppError('invalid_request', 'The request could not be processed as sent.');
  }
  request.log.error({ err: error }, 'unhandled error');
  return new AppError('internal_error', 'Something went wrong on our side; the request id helps us find it.');
}
