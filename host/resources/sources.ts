// The event sources the module state switches on and off: started when the module becomes
// enabled, stopped (in reverse order) when it is disabled or the engine stops. A source that
// fails to start is reported, shown as failed to `onState` (readiness) and tried again with
// exponential backoff until it starts or the module is disabled; the others run on meanwhile
// (as when the webhook's port is taken by another listener). Consumes ModuleState changes;
// produces started/stopped sources and their states.

/** A running source. */
export interface RunningSource {
  stop(): Promise<void>;
}

/** A source the module can start. */
export interface ModuleSource {
  name: string;
  start(): Promise<RunningSource>;
}

/** Where a source is: `off` while the module is disabled; `failed` until the retry at `retryInMs` succeeds. */
export type SourceState = { state: 'off'; reason: string } | { state: 'starting' } | { state: 'up' } | { state: 'failed'; error: string; attempts: number; retryInMs: number };

export interface ModuleSourcesOptions {
  /** Called on every state change of a source. */
  onState?(name: string, state: SourceState): void;
  /** First retry delay after a failed start, ms (default 1000); doubled per failure up to `retryMaxMs`. */
  retryMs?: number;
  /** Longest retry delay, ms (default 30 000). */
  retryMaxMs?: number;
}

/** Starts and stops registered sources as the module is enabled and disabled. */
export class ModuleSources {
  private readonly sources: ModuleSource[] = [];
  private readonly running = new Map<string, RunningSource>();
  /** Sources whose last start failed: attempts so far and the pending retry. */
  private readonly failed = new Map<string, { attempts: number; timer: NodeJS.Timeout }>();
  /** Sources whose start() is in flight. */
  private readonly starting = new Set<string>();
  private enabled = false;

  constructor(
    private readonly log: (message: string) => void,
    private readonly opts: ModuleSourcesOptions = {},
  ) {}

  /** Registers a source (started at once if the module is already enabled). */
  async add(source: ModuleSource): Promise<void> {
    this.sources.push(source);
    if (this.enabled) await this.startOne(source);
    else this.setState(source.name, { state: 'off', reason: 'the module is disabled' });
  }

  /** Names of the running sources. */
  get names(): string[] {
    return [...this.running.keys()];
  }

  /** Starts every source (enabled) or stops every running one (disabled). */
  async setEnabled(enabled: boolean): Promise<void> {
    this.enabled = enabled;
    if (enabled) for (const s of this.sources) await this.startOne(s);
    else await this.stopAll('the module is disabled');
  }

  /** Stops every running source, last started first, and every pending retry. */
  async stopAll(reason = 'stopped'): Promise<void> {
    this.enabled = false;
    for (const [name, f] of this.failed) {
      clearTimeout(f.timer);
      this.setState(name, { state: 'off', reason });
    }
    this.failed.clear();
    for (const name of [...this.running.keys()].reverse()) {
      const r = this.running.get(name)!;
      this.running.delete(name);
      try {
        await r.stop();
        this.log(`module: source ${name} stopped`);
      } catch (err) {
        this.log(`module: stopping source ${name}: ${(err as Error).message}`);
      }
      this.setState(name, { state: 'off', reason });
    }
  }

  private setState(name: string, state: SourceState): void {
    this.opts.onState?.(name, state);
  }

  private async startOne(s: ModuleSource): Promise<void> {
    if (this.running.has(s.name) || this.starting.has(s.name)) return;
    const prior = this.failed.get(s.name);
    if (prior) clearTimeout(prior.timer);
    this.failed.delete(s.name);
    this.setState(s.name, { state: 'starting' });
    let started: RunningSource;
    this.starting.add(s.name);
    try {
      started = await s.start();
    } catch (err) {
      this.retryLater(s, (prior?.attempts ?? 0) + 1, (err as Error).message);
      return;
    } finally {
      this.starting.delete(s.name);
    }
    // Disabled (or stopping) while it started: it must not keep running.
    if (!this.enabled) {
      await started.stop().catch(() => undefined);
      this.setState(s.name, { state: 'off', reason: 'the module is disabled' });
      return;
    }
    this.running.set(s.name, started);
    this.log(`module: source ${s.name} started${prior ? ` (after ${prior.attempts} failed attempt${prior.attempts === 1 ? '' : 's'})` : ''}`);
    this.setState(s.name, { state: 'up' });
  }

  private retryLater(s: ModuleSource, attempts: number, error: string): void {
    if (!this.enabled) {
      this.setState(s.name, { state: 'off', reason: 'the module is disabled' });
      return;
    }
    const retryInMs = Math.min((this.opts.retryMs ?? 1000) * 2 ** (attempts - 1), this.opts.retryMaxMs ?? 30_000);
    this.log(`module: source ${s.name} did not start: ${error}; retrying in ${retryInMs / 1000} s (attempt ${attempts}); the engine runs on without it`);
    const timer = setTimeout(() => {
      if (this.failed.get(s.name)?.timer === timer) void this.startOne(s);
    }, retryInMs);
    timer.unref();
    this.failed.set(s.name, { attempts, timer });
    this.setState(s.name, { state: 'failed', error, attempts, retryInMs });
  }
}
