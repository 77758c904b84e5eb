// Start-up step of `rae run`: the web console on its own port (console.address:console.port,
// loopback by default), once the API has opened its database, which the console reads. Prints
// `console: http://127.0.0.1:PORT/` on stderr and, on a first start (a database without users),
// the token to sign in with, once. A console that cannot start is logged; detection goes on.
// The console's module (its pages' routes and, through them, the API's query routes) is imported
// only when the console starts: `rae run` imports this file whether or not the API is enabled.
// Consumes the configuration, the lifecycle, the open database and the engine's rules; produces
// the console component.
import type { Db } from '../../api/db/index.js';
import type { Config } from '../../config/config.js';
import type { ConsoleRule } from '../../console/index.js';
import type { LoadResult, RuleFigure } from '../../engine/index.js';
import { log } from '../command.js';
import type { Lifecycle } from './lifecycle.js';

/** The rules the console's Rules page shows: the running ruleset's, with each rule's figures. */
export function consoleRules(loaded: LoadResult | undefined, figures: readonly RuleFigure[]): ConsoleRule[] {
  const by = new Map(figures.map((f) => [`${f.source}\0${f.rule}`, f]));
  return (loaded?.ruleset.rules ?? []).map((r) => {
    const f = by.get(`${r.source}\0${r.name}`);
    return { name: r.name, source: r.source, priority: r.priority, tags: r.tags, enabled: r.enabled, evaluations: f?.evaluations ?? 0, matches: f?.matches ?? 0 };
  });
}

/** Starts the console over `db` unless console.enabled is false; never throws. */
export async function startConsoleOf(config: Config, life: Lifecycle, db: Db, rules: () => ConsoleRule[]): Promise<void> {
  if (!config.console.enabled || life.stopping) return;
  try {
    const { startConsole } = await import('../../console/index.js');
    const running = await startConsole({ db, rules, log, address: config.console.address, port: config.console.port });
    // a stop that began while it started has passed the components already: close it here
    if (life.apiAbort.signal.aborted) return void (await running.close());
    life.add({ name: 'console', stop: () => running.close() });
    await announceConsole(running.url, db);
  } catch (err) {
    log(`run: the console did not start: ${(err as Error).message}; detection goes on without it`, 'error');
  }
}

/** Logs where the console is and, on a first start (a database without users), prints the token to sign in with, once (`rae run` and `rae forwarder`). */
export async function announceConsole(url: string, db: Db): Promise<void> {
  log(`console: ${url}`);
  const { firstStartToken } = await import('../../console/index.js');
  const token = await firstStartToken(db);
  // whatever the log level: this line is the only way to the first sign-in
  if (token) process.stderr.write(`console: first start: sign in with the token ${token} (printed this once; rae admin manages users and tokens)\n`);
}
