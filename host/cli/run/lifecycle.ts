// The lifecycle of one `rae run`: the components started so far (stopped last first), whether a
// stop has begun, the API still opening its database, and the readiness board whose changes are
// logged once the start is over. Consumed by every start-up step (run/start-*.ts), which register
// what they start; produced once by run.ts.
import { log } from '../command.js';
import { notReady, ReadinessBoard } from '../readiness.js';

/** A started part of the host. */
export interface Component {
  name: string;
  stop(): Promise<void>;
}

/** The components of one run, its stop and its readiness. */
export class Lifecycle {
  /** Set by the first SIGTERM/SIGINT (or a failed start): nothing new starts, reloads are ignored. */
  stopping = false;
  /** Settles once the API is up, has failed, or was closed by a stop during its start (rae run starts it last, without waiting). */
  apiStarted: Promise<void> | undefined;
  /** Tells an API still starting that the run stops: it closes its database instead of listening. */
  readonly apiAbort = new AbortController();
  readonly board: ReadinessBoard;
  private readonly components: Component[] = [];
  private started = false;
  private wasReady = false;

  constructor() {
    this.board = new ReadinessBoard((r) => {
      if (!this.started || this.stopping || r.ready === this.wasReady) return;
      this.wasReady = r.ready;
      log(r.ready ? `run: ready (${this.names()}): every component is up` : `run: no longer ready: ${notReady(r)}; /healthz answers 503 until it is up`);
    });
  }

  /** Registers a started component (stopped in reverse order). */
  add(component: Component): void {
    this.components.push(component);
  }

  /** The started components' names, in start order. */
  names(): string {
    return this.components.map((c) => c.name).join(', ');
  }

  /** The start is over: logs `ready` (or what it waits for); later readiness changes are logged as they come. */
  startedUp(): void {
    this.started = true;
    const names = this.names() || 'no servers';
    const readiness = this.board.report();
    this.wasReady = readiness.ready;
    // Without the word on its own while something failed: tests and scripts wait for it.
    log(readiness.ready ? `run: ready (${names})` : `run: started (${names}); waiting for ${notReady(readiness)}; /healthz answers 503 until every component is up`);
  }

  /**
   * Every started component, last first; then an API still opening its database, which cannot be
   * cut short (a PGlite first start is an initdb: stopped half-way it would leave a database the
   * next start cannot open) but holds no port yet: the ports are free before the wait.
   */
  async stopAll(): Promise<void> {
    this.apiAbort.abort();
    for (const c of this.components.reverse()) {
      try {
        await c.stop();
      } catch (err) {
        log(`run: stopping ${c.name}: ${(err as Error).message}`);
      }
    }
    if (!this.apiStarted) return;
    log('run: every component is stopped but the api, which is still opening its database; it closes it once open, without listening');
    await this.apiStarted;
  }
}
