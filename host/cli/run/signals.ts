// The signals of `rae run`, handled from the start: a stop or a reload during start-up is clean
// too, and no signal ends the process with accepted events still queued (Node's default for
// SIGHUP). SIGTERM, SIGINT and a closed stdout (the reader of the alert lines has gone: EPIPE, as
// SIGPIPE would, but a clean stop) stop the run; SIGHUP reloads, or once the start is over when it
// comes before the reloader exists. Consumes the lifecycle (its `stopping` flag); produces the
// stop signal run.ts waits for.
import { log, onStdoutClosed } from '../command.js';
import type { Reloader } from '../reload.js';
import type { Lifecycle } from './lifecycle.js';

/** What run.ts uses of the signal handling. */
export interface RunSignals {
  /** Settles with the first stop signal. */
  stopped: Promise<NodeJS.Signals>;
  /** From now on SIGHUP goes to `reloader`; a SIGHUP received before is requested at start-up's end (requestPending). */
  reloadWith(reloader: Reloader): void;
  /** Requests the reload of a SIGHUP that came before the reloader existed. */
  requestPending(): void;
}

/** Installs the handlers of SIGTERM, SIGINT, SIGHUP and a closed stdout. */
export function handleSignals(life: Lifecycle): RunSignals {
  let reloader: Reloader | undefined;
  let reloadPending = false;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (life.stopping) return log(`run: ${signal} received while stopping; the stop goes on (bounded by webhook.drainTimeoutSeconds)`);
      life.stopping = true;
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    onStdoutClosed(() => stop('SIGPIPE'));
  });
  process.on('SIGHUP', () => {
    if (life.stopping) return log('run: SIGHUP received while stopping; ignored');
    log('run: SIGHUP received, reloading the configuration and rules');
    if (reloader) void reloader.request();
    else reloadPending = true;
  });
  return {
    stopped,
    reloadWith: (r) => {
      reloader = r;
    },
    requestPending: () => {
      if (reloadPending && reloader) void reloader.request();
    },
  };
}
