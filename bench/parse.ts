// Scenario `parse`: how fast the front end loads the corpus rule files (reader, collector, list
// substitution, parser, macros, checker, event types, outputs) and how fast the parser alone
// parses conditions. Medians of several timed rounds after a warm-up.
import { loadRules, type RulesFile } from '../host/engine/index.js';
import { Diagnostics } from '../host/engine/diagnostics.js';
import { parseCondition } from '../host/engine/parser.js';
import { readRulesFile } from '../host/engine/reader.js';
import { SourceText } from '../host/engine/source-text.js';
import { figure, median, progress } from './report.js';
import { corpusText } from '../support/corpus.js';

const FILES = ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml', 'k8s_audit_rules.yaml'];

export async function run(): Promise<void> {
  const files: RulesFile[] = FILES.map((f) => ({ name: f, text: corpusText(f) }));
  for (const f of files) if (!loadRules([f]).ok) throw new Error(`corpus file ${f.name} does not load`);

  // Whole files through every load stage.
  const rounds: number[] = [];
  for (let i = 0; i < 12; i++) {
    const t0 = performance.now();
    for (const f of files) loadRules([f]);
    const ms = performance.now() - t0;
    if (i >= 2) rounds.push(ms);
    progress(`load round ${i}: ${ms.toFixed(1)} ms for ${files.length} files`);
  }
  const perFileMs = median(rounds) / files.length;
  figure('parse', 'files_loaded_per_s', 1000 / perFileMs, 'files/s', { files: FILES, median_ms_per_file: Number(perFileMs.toFixed(2)) });

  // Conditions alone: every macro and rule `condition:` of the corpus, as written.
  const conditions: string[] = [];
  for (const f of files) {
    for (const item of readRulesFile(new SourceText(f.name, f.text), new Diagnostics())) {
      if ((item.kind === 'macro' || item.kind === 'rule') && item.condition) conditions.push(item.condition.text);
    }
  }
  const ok = conditions.filter((c) => parseCondition(c).ok).length;
  const bytes = conditions.reduce((n, c) => n + c.length, 0);
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    for (const c of conditions) parseCondition(c);
    if (i >= 5) times.push(performance.now() - t0);
  }
  const ms = median(times);
  progress(`${conditions.length} conditions (${ok} parse), ${bytes} bytes, ${ms.toFixed(2)} ms per pass`);
  figure('parse', 'conditions_parsed_per_s', (conditions.length * 1000) / ms, 'conditions/s', { conditions: conditions.length, bytes });
  figure('parse', 'parse_mb_per_s', bytes / 1e6 / (ms / 1000), 'MB/s');
}
