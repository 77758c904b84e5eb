// SIGHUP in `rae run`, as in Falco: the configuration file and the rules (the built-in sets and
// rules.files) are read again and the new ruleset is swapped into the running engine; sources,
// servers and queued events are untouched, so no accepted event is lost. A configuration or
// ruleset that is invalid is reported and the running one keeps going. Only the rules keys are
// applied live (RELOADABLE); any other changed key is logged as needing a restart (ports, the
// state directory, TLS files, ...). Reloads never overlap: signals during one coalesce into one
// more. Consumes the config file and the running module; produces log lines and ruleset swaps.
import { loadConfig, type Config } from '../config/config.js';
import type { RunningModule } from '../resources/index.js';
import { checkRun } from './run-config.js';

/** The rules keys a reload applies to the running engine. */
const RELOADABLE_RULES_KEYS = ['builtIn', 'files', 'disableTags', 'enableTags', 'disableNames'] as const satisfies ReadonlyArray<keyof Config['rules']>;

/** Keys a reload applies to the running engine (dotted); every other change takes a restart. */
export const RELOADABLE: readonly string[] = RELOADABLE_RULES_KEYS.map((k) => `rules.${k}`);

/** Dotted keys whose values differ between two configurations (lists compare whole). */
export function changedKeys(a: unknown, b: unknown, path = ''): string[] {
  const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(a) || !isMap(b)) return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => changedKeys(a[k], b[k], path ? `${path}.${k}` : k));
}

export interface ReloaderOptions {
  /** `--config FILE` (undefined: the defaults, read again all the same). */
  configFile: string | undefined;
  stateDirOverride: string | undefined;
  /** The run's `-o` options (and the flags that stand for keys), applied again on each reload. */
  overrides?: readonly string[];
  /** The configuration as the run applies it; its reloadable keys are updated by each reload. */
  running: Config;
  module: Pick<RunningModule, 'reload'>;
  log: (message: string) => void;
}

/** Reloads on request, one at a time. */
export class Reloader {
  private busy: Promise<void> | undefined;
  private again = false;

  constructor(private readonly opts: ReloaderOptions) {}

  /** Resolves once no reload is in progress (a stop waits for it, so no load races the engine's close). */
  idle(): Promise<void> {
    return this.busy ?? Promise.resolve();
  }

  /** Starts a reload, or schedules one more after the reload in progress; resolves when none is left. */
  request(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return this.busy;
    }
    this.busy = (async () => {
      do {
        this.again = false;
        await this.reloadOnce();
      } while (this.again);
      this.busy = undefined;
    })();
    return this.busy;
  }

  private async reloadOnce(): Promise<void> {
    const { log, running } = this.opts;
    const t0 = performance.now();
    const refuse = (problems: string[]) => {
      for (const p of problems) log(`run: reload: ${p}`);
      log('run: reload refused: the running configuration and ruleset stay');
    };
    const { config, problems } = loadConfig(this.opts.configFile, this.opts.stateDirOverride, this.opts.overrides);
    if (problems.length > 0) return refuse(problems.map((p) => `config ${p.key}: ${p.message}`));
    const checked = checkRun(config);
    if (!checked.ok) return refuse(checked.problems);
    const restart = changedKeys(running, config).filter((k) => !RELOADABLE.includes(k));
    if (restart.length > 0) log(`run: reload: ${restart.join(', ')} changed in the configuration; that takes a restart (this run keeps the values it started with)`);
    const outcome = await this.opts.module.reload({ extraFiles: checked.files, builtIn: config.rules.builtIn });
    const ms = Math.round(performance.now() - t0);
    if (outcome === 'refused') {
      log(`run: reload refused after ${ms} ms: the new ruleset is invalid (reported above); the running ruleset stays`);
      return;
    }
    const keep = <K extends keyof Config['rules']>(k: K): void => {
      running.rules[k] = config.rules[k];
    };
    for (const k of RELOADABLE_RULES_KEYS) keep(k);
    log(`run: reload done in ${ms} ms: ${outcome === 'replaced' ? 'the new ruleset is live' : 'the ruleset is unchanged'} (sources and queued events kept)`);
  }
}
