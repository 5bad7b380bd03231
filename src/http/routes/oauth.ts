/**
 * The OAuth server's endpoints (MCP authorization): RFC 9728 metadata for the MCP endpoint, RFC 8414
 * and OpenID discovery, and /oauth/* (authorize, token, register, revoke, jwks), which the OAuth
 * server answers from the raw request, before Fastify reads a body. Off (404) without BASE_URL.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TypedApp } from '../../edge/server.ts';
import { AppError } from '../../errors.ts';
import type { Services } from '../../services.ts';

const off = () =>
  new AppError('not_found', 'MCP sign-in (OAuth) is off on this service: its operator has not set BASE_URL.');

export function registerOAuthRoutes(app: TypedApp, deps: Services): void {
  const { oauth } = deps;
  const config = { auth: 'none' as const };

  for (const url of [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp/jsonrpc',
  ])
    app.get(url, { config, schema: { hide: true } }, async (_request, reply) => {
      if (!oauth) throw off();
      reply.header('cache-control', 'public, max-age=3600');
      return oauth.resourceMetadata();
    });

  const handOver = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!oauth) throw off();
    // RFC 8414's document is the OpenID one: the library serves it under that name.
    if (request.url.startsWith('/.well-known/oauth-authorization-server'))
      request.raw.url = `/.well-known/openid-configuration${request.url.slice('/.well-known/oauth-authorization-server'.length)}`;
    reply.hijack();
    oauth.handle(request.raw, reply.raw);
  };
  const handler = async () => undefined;
  app.get(
    '/.well-known/oauth-authorization-server',
    { config, schema: { hide: true }, onRequest: handOver },
    handler,
  );
  app.get(
    '/.well-known/openid-configuration',
    { config, schema: { hide: true }, onRequest: handOver },
    handler,
  );
  app.route({
    method: ['GET', 'POST'],
    url: '/oauth/*',
    config,
    schema: { hide: true },
    onRequest: handOver,
    handler,
  });
}
