// Client bounds shared by the engine's HTTP servers (the audit webhook, the forwarder): how many
// connections one client address may hold open at once, and how long a client may take to send
// its headers and its whole request (slow-client timeouts, as Node's http server enforces them).
// A connection over the per-client bound is closed as it arrives, before any TLS handshake or
// parsing, counted, and logged (the first, then every 1000th, so a flood cannot flood the log).
// Consumes a net.Server and the limits; produces http.createServer options and a guard.
import type { Server, Socket } from 'node:net';

/** The configuration keys every HTTP server of the engine takes (docs/security.md "Limits"). */
export interface ClientLimits {
  /** Most connections open at once from one client address; 0: no bound. */
  maxConnectionsPerClient: number;
  /** Seconds a client has to send the request headers (Node's headersTimeout; answered 408). */
  headersTimeoutSeconds: number;
  /** Seconds a client has to send the whole request, body included (Node's requestTimeout; 408). */
  requestTimeoutSeconds: number;
}

/** Options for http(s).createServer enforcing the timeouts (the request one goes to fastify's own option too). */
export function timeoutOptions(l: ClientLimits): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  const requestTimeout = Math.max(0, l.requestTimeoutSeconds * 1000);
  // Node refuses a headers timeout longer than a non-zero request timeout.
  const headersTimeout = Math.max(1, requestTimeout > 0 ? Math.min(l.headersTimeoutSeconds * 1000, requestTimeout) : l.headersTimeoutSeconds * 1000);
  // Node checks the timeouts every connectionsCheckingInterval (default 30 s): check often enough for short ones.
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) };
}

/** Closes connections past `max` per client address as they arrive; returns the count of those closed. */
export function limitConnectionsPerClient(server: Server, max: number, name: string, log: (message: string) => void): { readonly refused: number } {
  const open = new Map<string, number>();
  let refused = 0;
  if (max > 0) {
    server.on('connection', (socket: Socket) => {
      const client = socket.remoteAddress ?? '';
      const n = open.get(client) ?? 0;
      if (n >= max) {
        refused++;
        if (refused % 1000 === 1) log(`${name}: closed a connection from ${client}: it already has ${n} open (maxConnectionsPerClient; ${refused} closed so far)`);
        socket.destroy();
        return;
      }
      open.set(client, n + 1);
      socket.once('close', () => {
        const left = (open.get(client) ?? 1) - 1;
        if (left > 0) open.set(client, left);
        else open.delete(client);
      });
    });
  }
  return {
    get refused() {
      return refused;
    },
  };
}
