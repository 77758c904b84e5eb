// Start-up step of `rae run`: the reloader of the configuration and rules (reload.ts), which SIGHUP
// and, with rules.watch, a change of a configured rules file request. Consumes the running
// module, the configuration as read and what reads it again; produces the reloader and, when
// watching, the rules-watch component.
import type { Config } from '../../config/config.js';
import { log } from '../command.js';
import { Reloader } from '../reload.js';
import { watchRulesFiles } from '../rules-watch.js';
import type { Lifecycle } from './lifecycle.js';
import type { RunFlags } from './load-config.js';
import type { RunModule } from './start-sources.js';

/** Creates the reloader and, if rules.watch, the watch of the configured rules files. */
export function startReload(config: Config, running: Config, flags: RunFlags, overrides: string[], module: RunModule, life: Lifecycle): Reloader {
  const reload = new Reloader({ configFile: flags.config, stateDirOverride: flags['state-dir'], overrides, running, module, log });
  if (config.rules.watch && config.rules.files.length > 0) {
    const watched = watchRulesFiles(
      config.rules.files,
      () => {
        if (life.stopping) return;
        log('run: a rules file changed, reloading the configuration and rules');
        void reload.request();
      },
      log,
    );
    life.add({ name: 'rules watch', stop: async () => watched.close() });
    log(`run: watching ${watched.dirs.join(', ')} for rules changes (rules.watch)`);
  }
  return reload;
}
