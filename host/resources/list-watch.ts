// One kind of object kept in step with the orchestrator's API by list and watch, as client-go's
// reflector does it (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes):
//   - list once: the objects and the list's resourceVersion;
//   - watch from that resourceVersion with bookmarks allowed; every event and every BOOKMARK moves
//     the resourceVersion on, so a watch that ends (the server's timeout, a reset connection) is
//     opened again from the last one seen: the server sends every change after it, nothing is
//     lost, nothing is seen twice;
//   - `410 Gone` (as an HTTP status or as an ERROR event: the resourceVersion is older than what
//     the server keeps) -> list again; the list replaces the cache, so a deletion missed in the
//     gap is seen as a deletion;
//   - other errors -> the same watch (or list) again after a backoff (retryMs doubling up to retryMaxMs).
// Changes are idempotent by resourceVersion (an event for the version already held changes
// nothing; resourceVersions are compared for equality only, they are opaque), so a relist that
// finds what the cache holds reports no change. Consumes a ListWatchTransport; produces the
// current objects and a call to onChange after each change of them.

/** The metadata this module reads of an object. */
interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
}

/** An object as the API serves it. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
}

/** One line of a watch stream (`{"type":..., "object":...}`). */
export interface WatchEvent {
  type: string;
  object: ApiObject & { code?: number; reason?: string; message?: string };
}

/** How a ListWatch reaches the API (kube-api.ts over @kubernetes/client-node; tests may use the same). */
export interface ListWatchTransport {
  /** What is listed and watched, for messages (`EngineAuditRules`). */
  readonly what: string;
  list(): Promise<{ items: ApiObject[]; resourceVersion: string }>;
  /**
   * Opens a watch from `resourceVersion` (bookmarks allowed) and hands each event to `onEvent`, in
   * order; resolves when the stream ends, rejects on an error (an HTTP 410 with `statusCode: 410`).
   * An exception thrown by `onEvent` ends the stream and rejects with it; aborting `signal` ends it.
   */
  watch(resourceVersion: string, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void>;
}

export interface ListWatchOptions {
  /** Called after every change of the objects (not for bookmarks or unchanged versions). */
  onChange(): void;
  log(message: string): void;
  /** First delay after a failure, ms (default 1000), doubled per failure in a row up to retryMaxMs (default 30 000). */
  retryMs?: number;
  retryMaxMs?: number;
}

/** The 410 that says a resourceVersion is gone: list again. */
class Expired extends Error {}

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: number; code?: number } | undefined;
  return err instanceof Expired || e?.statusCode === 410 || e?.code === 410;
}

const keyOf = (m: ObjectMeta): string => (m.namespace ? `${m.namespace}/${m.name}` : m.name);

/** Sleeps `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Lists and watches one kind; `run` goes on until its signal aborts. */
export class ListWatch {
  private readonly objects = new Map<string, ApiObject>();
  private resourceVersion = '';
  private listed = false;
  private readonly syncWaiters: Array<() => void> = [];

  constructor(
    private readonly transport: ListWatchTransport,
    private readonly opts: ListWatchOptions,
  ) {}

  /** The objects held now, by namespace/name. */
  items(): ApiObject[] {
    return [...this.objects.values()];
  }

  /** True once the first list has been received. */
  get synced(): boolean {
    return this.listed;
  }

  /** Resolves once the first list has been received. */
  whenSynced(): Promise<void> {
    return this.listed ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const { what } = this.transport;
    let failures = 0;
    while (!signal.aborted) {
      let progressed = false;
      try {
        if (!this.resourceVersion) {
          await this.relist();
          progressed = true;
        }
        const opened = performance.now();
        await this.transport.watch(
          this.resourceVersion,
          (e) => {
            this.handle(e);
            progressed = true;
          },
          signal,
        );
        // A clean end (the server's timeout, the client's for a silent stream) is opened again
        // at once; one that brought nothing and lasted under a second is paced like a failure,
        // so a server that closes every watch at once is not hammered.
        if (progressed || performance.now() - opened >= 1000) failures = 0;
        else await pause(this.delay(++failures), signal);
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.opts.log(`resources: watch of ${what} at resourceVersion ${this.resourceVersion} expired (410 Gone): listing again`);
          this.resourceVersion = '';
          continue;
        }
        if (progressed) failures = 0;
        const delay = this.delay(++failures);
        this.opts.log(`resources: ${this.resourceVersion ? 'watch' : 'list'} of ${what} failed: ${(err as Error).message}; again in ${delay / 1000} s (attempt ${failures})`);
        await pause(delay, signal);
      }
    }
  }

  private delay(failures: number): number {
    return Math.min((this.opts.retryMs ?? 1000) * 2 ** (failures - 1), this.opts.retryMaxMs ?? 30_000);
  }

  /** Replaces the cache with a fresh list; reports a change only when something differs. */
  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.transport.list();
    let changed = items.length !== this.objects.size;
    const next = new Map<string, ApiObject>();
    for (const o of items) {
      const k = keyOf(o.metadata);
      if (this.objects.get(k)?.metadata.resourceVersion !== o.metadata.resourceVersion) changed = true;
      next.set(k, o);
    }
    this.objects.clear();
    for (const [k, o] of next) this.objects.set(k, o);
    this.resourceVersion = resourceVersion;
    const first = !this.listed;
    this.listed = true;
    if (changed || first) this.opts.onChange();
    if (first) while (this.syncWaiters.length > 0) this.syncWaiters.shift()!();
  }

  /** Applies one watch event to the cache. */
  private handle(e: WatchEvent): void {
    const o = e.object;
    if (e.type === 'ERROR') {
      if (o.code === 410) throw new Expired(o.message ?? 'Gone');
      throw new Error(`the server sent an error: ${o.code ?? ''} ${o.reason ?? ''} ${o.message ?? ''}`.replace(/\s+/g, ' ').trim());
    }
    const rv = o.metadata?.resourceVersion;
    if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      const k = keyOf(o.metadata);
      if (this.objects.get(k)?.metadata.resourceVersion !== rv) {
        this.objects.set(k, o);
        this.opts.onChange();
      }
    } else if (e.type === 'DELETED') {
      if (this.objects.delete(keyOf(o.metadata))) this.opts.onChange();
    }
    // BOOKMARK: only its resourceVersion counts.
    if (rv) this.resourceVersion = rv;
  }
}
