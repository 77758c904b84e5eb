// The container metadata cache: a bounded map from 12-character container id to record, filled
// by listing every runtime at start, kept by following their lifecycle events, and completed on
// demand: get() of an unknown id answers at once (undefined: fields read <NA>) and queues one
// asynchronous lookup (bounded queue, bounded retries), as Falco's container plugin does. A
// runtime whose socket is absent at start is skipped with one log line; one that fails later is
// retried with exponential backoff, re-listed when it answers again, and logged once each way.
import { existsSync } from 'node:fs';
import { shortId, type ContainerRecord } from './record.js';
import type { MetadataSource, RuntimeEvent, Watch } from './source.js';

/** Bounds and timings of the cache. */
export interface CacheOptions {
  /** Most records kept; beyond it the oldest is dropped (counted). */
  maxEntries: number;
  /** Most ids waiting for a lookup; beyond it a lookup is dropped (counted) and asked again on the next get(). */
  queueSize: number;
  /** Lookups running at once. */
  concurrency: number;
  /** Tries per id before giving up until a runtime event names it. */
  retries: number;
  /** Delay before the first retry; doubled each time (Falco: 30 ms). */
  retryDelayMs: number;
  /** First and longest reconnect delay of a failed runtime. */
  backoffMs: number;
  maxBackoffMs: number;
}

const DEFAULT_CACHE_OPTIONS: CacheOptions = {
  maxEntries: 8192,
  queueSize: 256,
  concurrency: 4,
  retries: 3,
  retryDelayMs: 30,
  backoffMs: 500,
  maxBackoffMs: 30_000,
};

/** Counters for metrics and tests. */
export interface CacheStats {
  entries: number;
  lookups: number;
  found: number;
  notFound: number;
  dropped: number;
  evicted: number;
  errors: number;
}

type Log = (line: string) => void;

/** One runtime and its connection state. */
interface Runtime {
  source: MetadataSource;
  up: boolean;
  watch?: Watch;
  backoffMs: number;
  timer?: NodeJS.Timeout;
}

export class ContainerCache {
  private readonly records = new Map<string, ContainerRecord>();
  /** Ids queued or given up on; cleared for an id when a runtime event names it. */
  private readonly asked = new Set<string>();
  private readonly queue: string[] = [];
  private running = 0;
  private closed = false;
  private readonly runtimes: Runtime[];
  private readonly opts: CacheOptions;
  readonly stats: CacheStats = { entries: 0, lookups: 0, found: 0, notFound: 0, dropped: 0, evicted: 0, errors: 0 };
  /** Told of each record learned (or changed) and of each id forgotten (undefined): rae run writes the container table. */
  onChange: (id: string, r: ContainerRecord | undefined) => void = () => undefined;

  constructor(
    sources: MetadataSource[],
    opts: Partial<CacheOptions> = {},
    private readonly log: Log = () => undefined,
  ) {
    this.opts = { ...DEFAULT_CACHE_OPTIONS, ...opts };
    this.runtimes = sources.map((source) => ({ source, up: false, backoffMs: this.opts.backoffMs }));
  }

  /**
   * Connects every runtime whose socket exists (lists its containers, follows its events);
   * resolves when each has answered or failed once. Absent sockets: one line each, then skipped.
   */
  async start(): Promise<void> {
    const present = this.runtimes.filter((r) => {
      if (existsSync(r.source.socket)) return true;
      this.log(`container metadata: ${r.source.name} not found at ${r.source.socket}, skipped`);
      r.source.close();
      return false;
    });
    this.runtimes.splice(0, this.runtimes.length, ...present);
    await Promise.all(present.map((r) => this.connect(r)));
  }

  /** The record of a container id (12 or more characters), or undefined now and a lookup queued. Never waits. */
  get(id: string): ContainerRecord | undefined {
    const key = shortId(id);
    const r = this.records.get(key);
    if (r) return r;
    this.ask(key);
    return undefined;
  }

  /** The record if cached; queues nothing. */
  peek(id: string): ContainerRecord | undefined {
    return this.records.get(shortId(id));
  }

  /** Whether a runtime is connected now. */
  isUp(name: string): boolean {
    return this.runtimes.some((r) => r.source.name === name && r.up);
  }

  close(): void {
    this.closed = true;
    for (const r of this.runtimes) {
      clearTimeout(r.timer);
      r.watch?.close();
      r.source.close();
    }
    this.queue.length = 0;
  }

  private put(r: ContainerRecord): void {
    if (!this.records.has(r.id) && this.records.size >= this.opts.maxEntries) {
      const oldest = this.records.keys().next().value as string;
      this.records.delete(oldest);
      this.stats.evicted++;
      this.onChange(oldest, undefined);
    }
    this.records.set(r.id, r);
    this.asked.delete(r.id);
    this.stats.entries = this.records.size;
    this.onChange(r.id, r);
  }

  private remove(id: string): void {
    this.records.delete(id);
    this.asked.delete(id);
    this.stats.entries = this.records.size;
    this.onChange(id, undefined);
  }

  private ask(key: string): void {
    if (this.closed || this.asked.has(key) || this.runtimes.length === 0) return;
    if (this.queue.length >= this.opts.queueSize) {
      this.stats.dropped++;
      return;
    }
    // the asked set is bounded with the cache: past it, forget old give-ups
    if (this.asked.size >= this.opts.maxEntries) this.asked.clear();
    this.asked.add(key);
    this.queue.push(key);
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running < this.opts.concurrency && this.queue.length) {
      const key = this.queue.shift()!;
      this.running++;
      void this.lookup(key).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** Asks each connected runtime in turn; retries with doubling delay; gives up after `retries`. */
  private async lookup(key: string): Promise<void> {
    let delay = this.opts.retryDelayMs;
    for (let attempt = 0; attempt <= this.opts.retries && !this.closed; attempt++) {
      if (attempt > 0) {
        await new Promise((r) => setTimeout(r, delay));
        delay *= 2;
      }
      if (this.records.has(key)) return; // an event or a list brought it meanwhile
      for (const rt of this.runtimes) {
        if (!rt.up) continue;
        this.stats.lookups++;
        try {
          const r = await rt.source.get(key);
          if (r && !this.closed) {
            this.stats.found++;
            this.put(r);
            return;
          }
        } catch {
          this.stats.errors++;
        }
      }
    }
    this.stats.notFound++;
  }

  /** Lists the runtime's containers and follows its events; on failure schedules a reconnect. */
  private async connect(rt: Runtime): Promise<void> {
    if (this.closed) return;
    const wasDown = rt.backoffMs > this.opts.backoffMs;
    try {
      const listed = await rt.source.list();
      if (this.closed) return;
      rt.watch = rt.source.watch(
        (e) => this.onEvent(rt, e),
        (err) => this.lost(rt, err),
      );
      rt.up = true;
      rt.backoffMs = this.opts.backoffMs;
      for (const r of listed) this.put(r);
      this.log(`container metadata: ${rt.source.name} at ${rt.source.socket}${wasDown ? ' recovered' : ''}: ${listed.length} containers`);
    } catch (e) {
      this.lost(rt, e as Error);
    }
  }

  private lost(rt: Runtime, err: Error): void {
    if (this.closed) return;
    rt.watch?.close();
    rt.watch = undefined;
    if (rt.up || rt.backoffMs === this.opts.backoffMs) this.log(`container metadata: ${rt.source.name} failed (${err.message}); retrying with backoff`);
    rt.up = false;
    this.stats.errors++;
    const wait = rt.backoffMs;
    rt.backoffMs = Math.min(rt.backoffMs * 2, this.opts.maxBackoffMs);
    clearTimeout(rt.timer);
    rt.timer = setTimeout(() => void this.connect(rt), wait);
  }

  private onEvent(rt: Runtime, e: RuntimeEvent): void {
    const key = shortId(e.id);
    if (e.kind === 'delete') {
      this.remove(key);
      return;
    }
    // create and start: fetch unless cached (a give-up is forgotten: the runtime knows it now)
    this.asked.delete(key);
    if (rt.up) this.ask(key);
  }
}
