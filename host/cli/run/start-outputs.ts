// Start-up step of `rae run`: the alert's way out. The fan-out (stdout and the configured
// destinations) runs whether or not the forwarder does; the forwarder's server (falcosidekick's
// HTTP face, /healthz from the readiness board) feeds it. Consumes the configuration and the
// metrics; produces `submit`, through which every alert leaves, and registers one component
// whose stop closes the server first (nothing new reaches the fan-out while it drains).
import type { Config } from '../../config/config.js';
import { startForwarder, type ForwarderServer } from '../../forwarder/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { Alert } from '../../output/alert.js';
import { startFanout } from '../../output/fanout.js';
import { log } from '../command.js';
import type { Lifecycle } from './lifecycle.js';

/** Where alerts go, and the forwarder's entry on the readiness board. */
export interface Outputs {
  submit: (alert: Alert) => void;
  /** Marks the forwarder up (or off) on the readiness board and logs its address (after the API's early start, which takes the board's place before it). */
  announce(): void;
}

/** Starts the fan-out and, if enabled, the forwarder. */
export async function startOutputs(config: Config, metrics: Metrics, hostname: string, life: Lifecycle): Promise<Outputs> {
  const fanout = await startFanout({ config: config.forwarder, metrics, log, hostname });
  let forwarder: ForwarderServer | undefined;
  const stopForwarder = async () => {
    await forwarder?.close(); // the server first: nothing new reaches the fan-out while it drains
    await fanout.close();
  };
  life.add({ name: 'forwarder', stop: stopForwarder });
  if (config.forwarder.enabled) forwarder = await startForwarder({ config: config.forwarder, metrics, submit: fanout.submit, log, hostname, readiness: () => life.board.report() });
  const announce = () => {
    life.board.set('forwarder', forwarder ? { state: 'up' } : { state: 'off', reason: 'forwarder.enabled is false' });
    if (forwarder) log(`run: forwarder listening on ${forwarder.url}`);
  };
  return { submit: fanout.submit, announce };
}
