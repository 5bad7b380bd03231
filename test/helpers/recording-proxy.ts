/**
 * A loopback HTTP proxy in front of a test server that records what clients send (path, Idempotency-Key)
 * and what the server answered, and can lose an answer: `loseNext(match, status)` passes the next matching
 * request to the server (which does the work and charges for it) but answers the client a problem with
 * that status and Retry-After: 1, as a gateway that dropped the server's answer would.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** The server's status; the client got `sent` instead when the answer was lost. */
  status: number;
  sent: number;
  replayed: boolean;
}

export interface RecordingProxy {
  url: string;
  exchanges: Exchange[];
  loseNext(match: (path: string) => boolean, status: 429 | 503): void;
  close(): Promise<void>;
}

/** Hop-by-hop headers, and what fetch's decoding of the upstream body made wrong. */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'host',
]);

async function body(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const losses: { match: (path: string) => boolean; status: 429 | 503 }[] = [];
  const server = createServer(async (request, reply) => {
    const path = request.url ?? '/';
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (DROPPED.has(name) || value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    const upstream = await fetch(`${target}${path}`, {
      method: request.method ?? 'GET',
      headers,
      body: (await body(request)) ?? null,
    });
    const text = await upstream.text();
    const lossIndex = losses.findIndex((loss) => loss.match(path));
    const loss = lossIndex >= 0 ? losses.splice(lossIndex, 1)[0] : undefined;
    exchanges.push({
      method: request.method ?? 'GET',
      path,
      idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      status: upstream.status,
      sent: loss?.status ?? upstream.status,
      replayed: upstream.headers.get('idempotent-replayed') === 'true',
    });
    if (loss) {
      const title = loss.status === 429 ? 'Rate limit exceeded' : 'Service unavailable';
      reply.writeHead(loss.status, { 'content-type': 'application/problem+json', 'retry-after': '1' });
      reply.end(
        JSON.stringify({
          type: '/manual/errors#',
          title,
          status: loss.status,
          detail: 'The answer was lost on the way back.',
          code: loss.status === 429 ? 'rate_limited' : 'service_unavailable',
          request_id: 'proxy',
          retry_after: 1,
        }),
      );
      return;
    }
    const answer: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!DROPPED.has(name)) answer[name] = value;
    });
    reply.writeHead(upstream.status, answer);
    reply.end(text);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    loseNext(match, status) {
      losses.push({ match, status });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
