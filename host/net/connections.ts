// Client bounds shared by the engine's HTTP servers (the audit webhook, the forwarder): how many
// connections may be open at once, how long a client may take to finish its TLS handshake, and
// how long to send its headers and its whole request (slow-client timeouts, as Node's http server
// enforces them; on plain HTTP a connection that never sends a byte is closed by the headers
// timeout, on TLS by the handshake one).
// Connections are counted by where they stand. On a TLS server a connection is first in its
// handshake: those are bounded in total (maxUnauthenticatedConnections) and, past it, the OLDEST
// one still in its handshake is closed, never the newcomer, so connections held open without a
// handshake cannot lock anyone out (and the handshake deadline closes them anyway). A connection
// whose handshake completes with a client certificate the server verified is authenticated and
// counted apart (maxAuthenticatedConnections; past it the newcomer is closed): nothing
// unauthenticated counts against it. One that completes without a verified certificate is
// unauthenticated: bounded per client address (maxConnectionsPerClient) and in total
// (maxUnauthenticatedConnections); past a bound the newcomer is closed at once, so the served
// ones are not disturbed and a slow client cannot push out another. On a plain HTTP server every
// connection is unauthenticated from its arrival, bounded the same way.
// Closes are counted and logged (the first, then every 1000th, so a flood cannot flood the log).
// Consumes a net.Server and the limits; produces http.createServer options and a guard.
import type { Server, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** The configuration keys every HTTP server of the engine takes (docs/security.md "Limits"). */
export interface ClientLimits {
  /** Most unauthenticated connections open at once from one client address (the oldest is closed past it); 0: no bound. */
  maxConnectionsPerClient: number;
  /** Seconds a client has, from its connection, to finish the TLS handshake (Node's handshakeTimeout); TLS only. */
  handshakeTimeoutSeconds: number;
  /** Seconds a client has to send the request headers (Node's headersTimeout; answered 408). */
  headersTimeoutSeconds: number;
  /** Seconds a client has to send the whole request, body included (Node's requestTimeout; 408). */
  requestTimeoutSeconds: number;
}

/** Options for http(s).createServer enforcing the timeouts (the request one goes to fastify's own option too). */
export function timeoutOptions(l: ClientLimits): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; handshakeTimeout: number } {
  const requestTimeout = Math.max(0, l.requestTimeoutSeconds * 1000);
  // Node refuses a headers timeout longer than a non-zero request timeout.
  const headersTimeout = Math.max(1, requestTimeout > 0 ? Math.min(l.headersTimeoutSeconds * 1000, requestTimeout) : l.headersTimeoutSeconds * 1000);
  // An absolute deadline from the connection (a trickled handshake does not extend it); 0 would
  // mean Node's 120 s, so the least is 1 ms. Ignored by plain http servers.
  const handshakeTimeout = Math.max(1, l.handshakeTimeoutSeconds * 1000);
  // Node checks the timeouts every connectionsCheckingInterval (default 30 s): check often enough for short ones.
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout), handshakeTimeout };
}

/** Why the guard closed a connection (a bounded metric label). */
export type ClosedReason = 'client_limit' | 'unauthenticated_limit' | 'authenticated_limit';

/** The bounds of guardConnections; 0 is no bound. */
export interface ConnectionBounds {
  /** Unauthenticated connections of one client address. */
  perClient: number;
  /** Connections in their TLS handshake, and unauthenticated ones, each in total. */
  unauthenticated: number;
  /** Connections whose TLS client certificate the server verified. */
  authenticated: number;
}

/** What the guard has done and holds. */
export interface ConnectionGuard {
  /** Connections closed by the bounds since the start. */
  readonly closed: number;
  /** Connections open now, by where they stand. */
  open(): { handshaking: number; unauthenticated: number; authenticated: number };
}

interface Conn {
  raw: Socket;
  address: string;
  tls?: TLSSocket;
}

/** Connections in arrival order (a Set keeps insertion order), in total and per client address. */
class Pool {
  readonly all = new Set<Conn>();
  private readonly byClient = new Map<string, Set<Conn>>();
  add(c: Conn): void {
    this.all.add(c);
    const mine = this.byClient.get(c.address);
    if (mine) mine.add(c);
    else this.byClient.set(c.address, new Set([c]));
  }
  delete(c: Conn): void {
    if (!this.all.delete(c)) return;
    const mine = this.byClient.get(c.address)!;
    mine.delete(c);
    if (mine.size === 0) this.byClient.delete(c.address);
  }
  of(address: string): number {
    return this.byClient.get(address)?.size ?? 0;
  }
  /** The connection that has been in the pool longest. */
  oldest(): Conn | undefined {
    return this.all.values().next().value;
  }
}

/**
 * Bounds the server's connections as the file header says (`tls`: the server is a TLS server).
 * `onClosed` is told of every connection the bounds close (metrics). The cost is a few Map/Set
 * operations per connection, none per request.
 */
export function guardConnections(server: Server, name: string, tls: boolean, bounds: ConnectionBounds, log: (message: string) => void, onClosed: (reason: ClosedReason) => void = () => {}): ConnectionGuard {
  const handshaking = new Pool();
  const unauthenticated = new Pool();
  const authenticated = new Pool();
  /** Open connections by `address|port`, to find the raw connection of a TLS socket. */
  const byPeer = new Map<string, Conn>();
  let closed = 0;
  const over = (bound: number, n: number) => bound > 0 && n > bound;

  function close(c: Conn, reason: ClosedReason, why: string) {
    for (const pool of [handshaking, unauthenticated, authenticated]) pool.delete(c);
    closed++;
    onClosed(reason);
    if (closed % 1000 === 1) log(`${name}: closed a connection from ${c.address}: ${why} (${closed} closed so far)`);
    c.tls?.destroy();
    c.raw.destroy();
  }

  /** A connection that is now unauthenticated: kept within the bounds, else closed. */
  function admitUnauthenticated(c: Conn) {
    const n = unauthenticated.of(c.address);
    if (over(bounds.perClient, n + 1)) return close(c, 'client_limit', `it already has ${n} open (maxConnectionsPerClient)`);
    if (over(bounds.unauthenticated, unauthenticated.all.size + 1)) return close(c, 'unauthenticated_limit', `${unauthenticated.all.size} unauthenticated connections are open (maxUnauthenticatedConnections)`);
    unauthenticated.add(c);
  }

  server.on('connection', (raw: Socket) => {
    const c: Conn = { raw, address: raw.remoteAddress ?? '' };
    const peer = `${c.address}|${raw.remotePort}`;
    raw.once('close', () => {
      if (byPeer.get(peer) === c) byPeer.delete(peer);
      for (const pool of [handshaking, unauthenticated, authenticated]) pool.delete(c);
    });
    if (!tls) return admitUnauthenticated(c);
    byPeer.set(peer, c);
    handshaking.add(c);
    if (over(bounds.unauthenticated, handshaking.all.size)) {
      close(handshaking.oldest()!, 'unauthenticated_limit', `${bounds.unauthenticated} connections were in their TLS handshake when a newer one arrived (maxUnauthenticatedConnections); the oldest is closed`);
    }
  });

  server.on('secureConnection', (socket: TLSSocket) => {
    const c = byPeer.get(`${socket.remoteAddress ?? ''}|${socket.remotePort}`);
    if (!c || !handshaking.all.has(c)) return;
    c.tls = socket;
    handshaking.delete(c);
    if (!socket.authorized) return admitUnauthenticated(c);
    authenticated.add(c);
    if (over(bounds.authenticated, authenticated.all.size)) {
      close(c, 'authenticated_limit', `it has a verified client certificate, but ${bounds.authenticated} such connections are open (maxAuthenticatedConnections)`);
    }
  });

  return {
    get closed() {
      return closed;
    },
    open: () => ({ handshaking: handshaking.all.size, unauthenticated: unauthenticated.all.size, authenticated: authenticated.all.size }),
  };
}
