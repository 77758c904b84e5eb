// The event sources the module state switches on and off: started when the module becomes
// enabled, stopped (in reverse order) when it is disabled or the engine stops. A source that
// fails to start is reported and the others run on (as the syscall source does when the kernel
// cannot run the probe). Consumes ModuleState changes; produces started/stopped sources.

/** A running source. */
export interface RunningSource {
  stop(): Promise<void>;
}

/** A source the module can start. */
export interface ModuleSource {
  name: string;
  start(): Promise<RunningSource>;
}

/** Starts and stops registered sources as the module is enabled and disabled. */
export class ModuleSources {
  private readonly sources: ModuleSource[] = [];
  private readonly running = new Map<string, RunningSource>();
  private enabled = false;

  constructor(private readonly log: (message: string) => void) {}

  /** Registers a source (started at once if the module is already enabled). */
  async add(source: ModuleSource): Promise<void> {
    this.sources.push(source);
    if (this.enabled) await this.startOne(source);
  }

  /** Names of the running sources. */
  get names(): string[] {
    return [...this.running.keys()];
  }

  /** Starts every source (enabled) or stops every running one (disabled). */
  async setEnabled(enabled: boolean): Promise<void> {
    this.enabled = enabled;
    if (enabled) for (const s of this.sources) await this.startOne(s);
    else await this.stopAll();
  }

  /** Stops every running source, last started first. */
  async stopAll(): Promise<void> {
    for (const name of [...this.running.keys()].reverse()) {
      const r = this.running.get(name)!;
      this.running.delete(name);
      try {
        await r.stop();
        this.log(`module: source ${name} stopped`);
      } catch (err) {
        this.log(`module: stopping source ${name}: ${(err as Error).message}`);
      }
    }
  }

  private async startOne(s: ModuleSource): Promise<void> {
    if (this.running.has(s.name)) return;
    try {
      this.running.set(s.name, await s.start());
      this.log(`module: source ${s.name} started`);
    } catch (err) {
      this.log(`module: source ${s.name} did not start: ${(err as Error).message}; the engine runs on without it`);
    }
  }
}
