// Resolves the rules' domain names off the event path and keeps them fresh, as libsinsp's DNS
// manager does (libs userspace/libsinsp/dns_manager.cpp, sinsp_dns_resolver::refresh): every
// refresh interval (10 s) the names whose time has come are resolved again; an unchanged answer
// doubles that name's interval up to the maximum (320 s), a changed one sets it back to the
// base. A failed lookup is an empty answer (libsinsp's getaddrinfo failing leaves an empty set).
// libsinsp drops a name unused for an hour and resolves it again, blocking, on its next use;
// here the names are those of the loaded rules (names.ts), resolved as soon as the rules load
// and dropped when no rule uses them. Answers go to the DNS table (table.ts); nothing here runs
// per event. Without configured servers a name is looked up as libsinsp does (getaddrinfo,
// AF_UNSPEC: /etc/hosts and the system resolver); with servers, A and AAAA queries go to them.
import { promises as dns } from 'node:dns';
import type { ConfigProblem } from '../../config/problem.js';
import type { DnsTable } from './table.js';

/** The `dns` configuration keys (host/config/config.ts). */
export interface DnsConfig {
  /** DNS servers (`host` or `host:port`); empty: the system's resolver through getaddrinfo. */
  servers: string[];
  /** libsinsp's base refresh interval (m_base_refresh_timeout, 10 s). */
  refreshSeconds: number;
  /** libsinsp's maximum refresh interval (m_max_refresh_timeout, 320 s). */
  maxRefreshSeconds: number;
  /** Deadline of one query to a configured server. */
  timeoutMs: number;
}

/** Falco's defaults (sinsp_dns_manager's constructor). */
export const DNS_DEFAULTS: DnsConfig = { servers: [], refreshSeconds: 10, maxRefreshSeconds: 320, timeoutMs: 5000 };

/** The dns.* intervals are positive numbers (the maximum at least the base), servers `host` or `host:port` texts. */
export function checkDnsConfig(dns: DnsConfig): ConfigProblem[] {
  const { refreshSeconds, maxRefreshSeconds, timeoutMs, servers } = dns;
  const problems: ConfigProblem[] = [];
  for (const [k, v] of [
    ['refreshSeconds', refreshSeconds],
    ['maxRefreshSeconds', maxRefreshSeconds],
    ['timeoutMs', timeoutMs],
  ] as const)
    if (!Number.isFinite(v) || v <= 0) problems.push({ key: `dns.${k}`, message: `expected a positive number, got ${v}` });
  if (problems.length === 0 && maxRefreshSeconds < refreshSeconds) problems.push({ key: 'dns.maxRefreshSeconds', message: `expected at least dns.refreshSeconds (${refreshSeconds}), got ${maxRefreshSeconds}` });
  for (const s of servers) if (typeof s !== 'string' || s === '') problems.push({ key: 'dns.servers', message: `expected server addresses (host or host:port), got ${JSON.stringify(s)}` });
  return problems;
}

/**
 * Lookups in flight at once: getaddrinfo runs on libuv's small thread pool (shared with file
 * I/O), where a resolver that does not answer holds a thread for seconds; a ruleset of a hundred
 * names (the sandbox miner domains) queues instead of filling the pool.
 */
const MAX_IN_FLIGHT = 2;

/** One name's state: its last answer, its refresh interval and when it is due. */
interface NameState {
  answer?: string;
  intervalMs: number;
  dueMs: number;
  busy: boolean;
}

/** A name's addresses, sorted; empty when it does not resolve. */
export type Lookup = (name: string) => Promise<string[]>;

/** A lookup through getaddrinfo (no servers) or A and AAAA queries to the configured servers. */
function lookupFor(config: DnsConfig): Lookup {
  if (config.servers.length === 0)
    return async (name) => {
      const all = await dns.lookup(name, { all: true, family: 0 }).catch(() => []);
      return [...new Set(all.map((a) => a.address))].sort();
    };
  const r = new dns.Resolver({ timeout: config.timeoutMs, tries: 2 });
  r.setServers(config.servers);
  return async (name) => {
    const [v4, v6] = await Promise.all([r.resolve4(name).catch(() => []), r.resolve6(name).catch(() => [])]);
    return [...new Set([...v4, ...v6])].sort();
  };
}

/** Keeps the DNS table's names resolved; stop() ends the refresh timer. */
export class DnsResolver {
  private readonly states = new Map<string, NameState>();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  private inFlight = 0;
  private readonly queue: Array<() => void> = [];
  /** Lookups made, and answers that changed a name's addresses. */
  lookups = 0;
  changes = 0;

  constructor(
    private readonly table: DnsTable,
    private readonly config: DnsConfig,
    private readonly lookup: Lookup = lookupFor(config),
    private readonly onChange: (name: string, addresses: readonly string[]) => void = () => undefined,
  ) {
    table.onNames = (names) => this.want(names);
    this.want(table.names);
    this.timer = setInterval(() => this.refresh(), config.refreshSeconds * 1000);
    this.timer.unref();
  }

  /** Follows the names of the bound rules: new ones are resolved at once, others forgotten. */
  want(names: readonly string[]): void {
    const keep = new Set(names);
    for (const n of this.states.keys()) if (!keep.has(n)) this.states.delete(n);
    for (const n of names) {
      if (this.states.has(n)) continue;
      this.states.set(n, { intervalMs: this.config.refreshSeconds * 1000, dueMs: 0, busy: false });
      void this.resolve(n, Date.now());
    }
  }

  /** One pass of the refresh loop: every name whose interval has passed is resolved again. */
  refresh(now = Date.now()): void {
    for (const [n, s] of this.states) if (!s.busy && now >= s.dueMs) void this.resolve(n, now);
  }

  /** Resolves `name` (a refresh pass at `now`) and schedules its next lookup from `now`. */
  private async resolve(name: string, now: number): Promise<void> {
    const s = this.states.get(name);
    if (!s || s.busy || this.stopped) return;
    s.busy = true;
    if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((go) => this.queue.push(go));
    this.inFlight++;
    this.lookups++;
    let addresses: string[];
    try {
      addresses = this.stopped ? [] : await this.lookup(name);
    } finally {
      this.inFlight--;
      this.queue.shift()?.();
    }
    s.busy = false;
    if (this.stopped || this.states.get(name) !== s) return;
    const answer = addresses.join(',');
    const base = this.config.refreshSeconds * 1000;
    if (answer !== s.answer) {
      s.answer = answer;
      s.intervalMs = base;
      this.changes++;
      this.table.set(name, addresses);
      this.onChange(name, addresses);
    } else if (s.intervalMs < this.config.maxRefreshSeconds * 1000) {
      s.intervalMs = Math.min(s.intervalMs * 2, this.config.maxRefreshSeconds * 1000);
    }
    s.dueMs = now + s.intervalMs;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}
