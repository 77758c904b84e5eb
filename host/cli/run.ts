// `rae run`: the long-running host. Loads the configuration (defaults unless --config), the
// built-in and configured rules, starts every enabled component, reports `ready` on stderr once
// all are up, and stops them cleanly on SIGTERM/SIGINT.
import { mkdirSync } from 'node:fs';
import { startApi } from '../api/index.js';
import { loadConfig, type Config } from '../config/config.js';
import { builtinRulesFiles } from '../engine/builtin.js';
import { renderDiagnostic } from '../engine/diagnostics.js';
import { loadRules, type LoadResult } from '../engine/index.js';
import { log, parseCommandArgs, type Command } from './command.js';
import { readRulesFiles } from './rules-files.js';

const HELP = `Usage: rae run [--config FILE] [--state-dir DIR]

Runs the engine: loads the built-in rules (rules/) and any configured rules files, starts the
enabled sources and servers, prints one line containing 'ready' on stderr once everything is up,
and runs until SIGTERM or SIGINT. Detections are written to stdout as JSON lines; logs go to
stderr.

Options:
  -c, --config FILE     YAML configuration; every setting has a default, so none is needed
      --state-dir DIR   state directory (default: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine
                        as root, else ~/.local/state/runtime-audit-engine)
  -h, --help            show this help

Components (each can be disabled in the configuration):
  api        error-tracking REST API on 127.0.0.1:8080 (api.*)`;

/** A started part of the host. */
interface Component {
  name: string;
  stop(): Promise<void>;
}

/** Loads the built-in sets and configured files; prints diagnostics. Undefined when invalid. */
function loadConfiguredRules(config: Config): LoadResult | undefined {
  const builtin = builtinRulesFiles(config.rules.builtIn);
  if (builtin.unknown.length > 0) {
    log(`run: unknown built-in rule set(s): ${builtin.unknown.join(', ')} (known: syscall, syscall-incubating, syscall-sandbox, orchestrator-audit)`);
    return undefined;
  }
  const extra = readRulesFiles(config.rules.files);
  for (const p of extra.problems) log(`run: ${p}`);
  const result = loadRules([...builtin.files, ...extra.files]);
  for (const d of result.diagnostics.filter((x) => x.severity === 'error')) log(renderDiagnostic(d, result.sources));
  if (!result.ok || extra.problems.length > 0) return undefined;
  const warnings = result.diagnostics.length;
  const s = result.ruleset.stats;
  log(`run: loaded ${s.rules} rules (${s.enabled} enabled), ${s.macros} macros, ${s.lists} lists from ${builtin.files.length + extra.files.length} file(s); ${warnings} warning(s) (see rae validate)`);
  return result;
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run the engine (built-in rules, sources, servers) until SIGTERM/SIGINT',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { config: { type: 'string', short: 'c' }, 'state-dir': { type: 'string' } });
    const { config, problems } = loadConfig(values.config, values['state-dir']);
    if (problems.length > 0) {
      for (const p of problems) log(`run: config ${p.key}: ${p.message}`);
      return 1;
    }
    mkdirSync(config.stateDir, { recursive: true });
    log(`run: state directory ${config.stateDir}`);
    const rules = loadConfiguredRules(config);
    if (!rules) return 1;

    const components: Component[] = [];
    const stopAll = async () => {
      for (const c of components.reverse()) {
        try {
          await c.stop();
        } catch (err) {
          log(`run: stopping ${c.name}: ${(err as Error).message}`);
        }
      }
    };
    try {
      if (config.api.enabled) {
        const api = await startApi({ config, log, databaseUrl: process.env.DATABASE_URL });
        components.push({ name: 'api', stop: () => api.close() });
        log(`run: api listening on ${api.url}`);
      }
    } catch (err) {
      log(`run: failed to start: ${(err as Error).message}`);
      await stopAll();
      return 1;
    }
    log(`run: ready (${components.map((c) => c.name).join(', ') || 'no servers'})`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    log(`run: ${signal} received, stopping`);
    await stopAll();
    log('run: stopped');
    return 0;
  },
};
