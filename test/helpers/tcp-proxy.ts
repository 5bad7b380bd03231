/**
 * A loopback TCP proxy in front of PostgreSQL or Redis, so a test can make the server slow or take it
 * away (and bring it back) for the service nodes, without stopping the machine's shared server.
 * `cut()` closes the listener and destroys every open connection: to a client this is exactly a
 * stopped server (connections reset, new ones refused). `restore()` listens again on the same port.
 * `blackhole()` silently drops everything on the connections open at that moment, in both directions,
 * with no reset and no FIN (a failover or a firewall losing its state table); new connections work.
 * `mute()` drops only what the server sends back on them.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Delays every chunk from client to server by this many ms (order kept). */
  setDelay(ms: number): void;
  blackhole(): void;
  /** Drops what the server sends on the connections open at that moment; what clients send still arrives. */
  mute(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** Connections whose traffic is dropped from now on. */
  const dropped = new WeakSet<Socket>();
  /** Connections whose server-to-client traffic is dropped from now on. */
  const muted = new WeakSet<Socket>();
  let delayMs = 0;
  let port = 0;
  let server: Server;

  const handle = (client: Socket) => {
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    let queue = Promise.resolve();
    client.on('data', (chunk) => {
      if (dropped.has(client)) return;
      if (delayMs === 0) {
        queue = queue.then(() => {
          upstream.write(chunk);
        });
        return;
      }
      const ms = delayMs;
      queue = queue.then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              if (!upstream.destroyed) upstream.write(chunk);
              resolve();
            }, ms),
          ),
      );
    });
    upstream.on('data', (chunk) => {
      if (!dropped.has(client) && !muted.has(client)) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // Bytes a delay still holds were sent before the client closed: they arrive first, as on a network.
    client.on('close', () => void queue.then(end));
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  };

  const listen = async () => {
    server = createServer(handle);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address && typeof address === 'object') port = address.port;
  };
  await listen();

  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closed;
  };

  return {
    get port() {
      return port;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    blackhole() {
      for (const socket of sockets) dropped.add(socket);
    },
    mute() {
      for (const socket of sockets) muted.add(socket);
    },
    cut,
    restore: listen,
    async close() {
      if (server.listening) await cut();
    },
  };
}
