// Build step (scripts/build.mjs): the compiled module of a default `rae run` (the default
// configuration's built-in rule sets, no rules files) written into the build's shipped module
// cache, so a first start with those rules takes it instead of compiling (runtime
// SHIPPED_MODULE_DIR: found by the same key as the state directory's cache, so rules, compiler or
// runtime that differ from the build's find nothing there and compile as before). The engine is
// set up as start-engine.ts sets it up for what decides the module's code (the selected rules,
// their order, the counters). Consumes the default configuration; produces `<key>.wasm` in `dir`.
import { readdirSync } from 'node:fs';
import { defaultConfig } from '../../config/config.js';
import { builtinRulesFiles } from '../../engine/index.js';
import { DetectionEngine, SHIPPED_MODULE_DIR } from '../../runtime/index.js';
import { checkRun, expandLimitsOf } from '../run-config.js';

/** Builds a default start's module into `dir` (default: the build's shipped cache); throws with the reason if it cannot. */
export async function shipModule(dir = SHIPPED_MODULE_DIR): Promise<void> {
  const config = defaultConfig({});
  const checked = checkRun(config);
  if (!checked.ok) throw new Error(`ship-module: the default configuration is refused: ${checked.problems.join('; ')}`);
  const engine = new DetectionEngine({
    ruleMatching: config.rules.ruleMatching,
    minPriority: checked.minPriority,
    ruleCounters: config.rules.ruleCounters,
    expandLimits: expandLimitsOf(config),
    moduleCacheDir: dir,
    hostname: 'build',
    onAlert: () => undefined, // nothing is evaluated
  });
  try {
    await engine.precompile([...builtinRulesFiles(config.rules.builtIn).files, ...checked.files]);
    // precompile reports no failure of its own: the file it writes is the proof
    if (!readdirSync(dir).some((n) => n.endsWith('.wasm'))) throw new Error(`ship-module: the default rules' module was not written into ${dir} (the compile failed?)`);
  } finally {
    await engine.close();
  }
}
