/**
 * buildApp(deps): the service without listening, the composition of its faces on one HTTP server. The
 * edge (src/edge) runs before every route; REST, MCP and the Terminal are mounted beside each other and
 * never import one another. No I/O happens at import.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from './deps.ts';
import { installEdgeHooks } from './edge/hooks.ts';
import { transformObject } from './edge/openapi.ts';
import { createServer, type ServerOptions } from './edge/server.ts';
import { registerRestRoutes } from './http/rest.ts';
import { registerTerminal } from './http/terminal.ts';
import { mcpPathItem } from './mcp/openapi.ts';
import { MCP_PATH, registerMcpRoutes } from './mcp/route.ts';

export type AppOptions = ServerOptions;

export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = createServer(deps.env, options);
  installEdgeHooks(app, deps);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Token-metered data service',
        version: '1.0.0',
        description:
          'Financial, economic, regulatory and open datasets sold by the read. Every read burns tokens from a prepaid wallet; cost headers report each charge.',
        license: {
          name: 'Proprietary: data and API terms of the operator',
          identifier: 'LicenseRef-Proprietary',
        },
      },
      // Without BASE_URL, the service that serves the document.
      servers: [
        deps.env.BASE_URL
          ? { url: deps.env.BASE_URL }
          : { url: '/', description: 'The service that serves this document' },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A key (tmd_sbx_, tmd_fpt_, tmd_live_) or a session JWT.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, for /api/v1/admin only.' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: transformObject({ [MCP_PATH]: mcpPathItem() }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const typed = app.withTypeProvider<ZodTypeProvider>();
  registerRestRoutes(typed, deps);
  registerMcpRoutes(app, deps);
  registerTerminal(typed);
  return app;
}
