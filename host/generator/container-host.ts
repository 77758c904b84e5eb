// What the two kinds of container hosts of the generator share (container.ts: a runtime's
// containers; cgroup-box.ts: boxes made without a runtime): one plain and one privileged
// container, each made on first use; from the first one on, SIGINT/SIGTERM/SIGHUP remove them
// before the process exits (128 + the signal); close() removes them once, and a second call (the
// run's end while a signal's close goes on) waits for the first.
import { constants } from 'node:os';
import type { ActionContainer, ContainerHost } from './types.js';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export abstract class ContainerHostBase implements ContainerHost {
  abstract readonly runtime: ActionContainer['runtime'];
  private readonly made = new Map<boolean, Promise<ActionContainer>>();
  private readonly onSignal = (sig: NodeJS.Signals) => void this.close().finally(() => process.exit(128 + (constants.signals[sig] ?? 15)));
  private closing?: Promise<void>;
  /** Whether the signal handlers are installed (from the first container on). */
  private trapping = false;

  /** `the container runner`, `the cgroup boxes`: for the error of a use after close. */
  protected abstract readonly what: string;
  /** Makes and starts one container. */
  protected abstract make(privileged: boolean): Promise<ActionContainer>;
  /** Removes every container made (those being made have settled); errors thrown together. */
  protected abstract remove(): Promise<void>;

  /** The plain or the privileged container, made and started on first use. */
  container(privileged: boolean): Promise<ActionContainer> {
    if (this.closing) return Promise.reject(new Error(`${this.what} is closed`));
    let c = this.made.get(privileged);
    if (!c) {
      if (!this.trapping) for (const sig of SIGNALS) process.on(sig, this.onSignal);
      this.trapping = true;
      c = this.make(privileged);
      this.made.set(privileged, c);
    }
    return c;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const sig of SIGNALS) process.off(sig, this.onSignal);
      // a container still being made is removed once it exists
      await Promise.allSettled(this.made.values());
      await this.remove();
    })();
    return this.closing;
  }
}
