// The rules side of `rae run`'s start: how a load is reported (errors in full, a summary line,
// every rules file's sha256 in the metrics and the fault tracking), and --dry-run / -L / -l, which
// load the rules as `rae run` would and stop there. Consumes the configuration and load results;
// produces log lines, printed rules and an exit code.
import { createHash } from 'node:crypto';
import type { Config } from '../../config/config.js';
import { builtinRulesFiles, type LoadResult, loadRules, renderDiagnostic, type RuleFigure } from '../../engine/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { FaultTracking } from '../../tracking/index.js';
import { log } from '../command.js';
import { fetchFigures } from '../rule-figures.js';
import { checkRun, expandLimitsOf, SELECTION_FILE } from '../run-config.js';
import { describeRule, printRules, versionInfo } from '../run-info.js';

/** Logs a load result: errors in full, then a one-line summary. */
function reportLoad(result: LoadResult): void {
  for (const d of result.diagnostics.filter((x) => x.severity === 'error')) log(renderDiagnostic(d, result.sources), 'error');
  const s = result.ruleset.stats;
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning').length;
  log(`run: loaded ${s.rules} rules (${s.enabled} enabled), ${s.macros} macros, ${s.lists} lists from ${result.files.length} file(s); ${warnings} warning(s) (see rae validate)`);
}

/** What runs on every load: the report, and every loaded rules file's sha256, as Falco's falcosecurity_falco_sha256_rules_files_info. */
export function onRulesLoaded(metrics: Metrics, tracking: FaultTracking): (r: LoadResult) => void {
  return (r) => {
    reportLoad(r);
    const files = r.files.filter((f) => f.name !== SELECTION_FILE).map((f) => ({ name: f.name, text: r.sources(f.name)?.text ?? '' }));
    const hashes = Object.entries(versionInfo(files).rules_files_sha256).map(([name, sha256]) => ({ name, sha256 }));
    metrics.rulesFiles(hashes);
    tracking.setRulesHash(
      createHash('sha256')
        .update(hashes.map((h) => `${h.name} ${h.sha256}\n`).join(''))
        .digest('hex'),
    );
  };
}

/**
 * --dry-run, -L and -l: the configuration and the rules as `rae run` would load them, without
 * starting anything. With `url` (-l RULE --url), the rule's figures from that running engine too.
 */
export async function inspectRules(config: Config, describe: string | undefined, list: boolean, json: boolean, url?: string): Promise<number> {
  let figures: readonly RuleFigure[] | undefined;
  if (url !== undefined) {
    const got = await fetchFigures(url);
    if (!got.ok) {
      log(`run: --url: ${got.message}`, 'error');
      return 1;
    }
    figures = got.figures;
  }
  const checked = checkRun(config);
  if (!checked.ok) {
    for (const p of checked.problems) log(`run: ${p}`, 'error');
    return 1;
  }
  // the same bounds as the engine of `rae run` loads with
  const result = loadRules([...builtinRulesFiles(config.rules.builtIn).files, ...checked.files], { limits: expandLimitsOf(config) });
  if (describe !== undefined) {
    const rule = result.ruleset.rules.find((r) => r.name === describe);
    if (!rule) {
      log(`run: -l: no loaded rule is named '${describe}'`, 'error');
      return 1;
    }
    describeRule(rule, json, result, figures);
    return 0;
  }
  if (list) {
    printRules(result.ruleset.rules, json);
    return 0;
  }
  reportLoad(result);
  log(`run: dry run: the configuration is valid and the rules ${result.ok ? 'load' : 'have errors (above)'}; exiting without starting`);
  return result.ok ? 0 : 1;
}
