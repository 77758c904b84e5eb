// Per-rule figures for the commands (`rae profile`, `rae describe`, `rae run -l`): read from a
// running engine's /metrics (the enginesecurity_engine_rule_* counters) and rendered as a table
// ranked by cost share. Consumes the Prometheus text exposition; produces RuleFigure rows.
import { METRICS } from '../metrics/index.js';
import { rankByCost, type RuleFigure } from '../engine/index.js';

type Source = RuleFigure['source'];

const FIELD_OF: Record<string, 'evaluations' | 'matches' | 'costSeconds'> = {
  [METRICS.ruleEvaluations.name]: 'evaluations',
  [METRICS.ruleMatches.name]: 'matches',
  [METRICS.ruleCostSeconds.name]: 'costSeconds',
};

/** A label value as the exposition escapes it (\\, \", \n). */
const unescapeLabel = (v: string) => v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** The rule figures in a Prometheus text exposition (other samples are ignored). */
function figuresFromMetrics(text: string): RuleFigure[] {
  const rows = new Map<string, RuleFigure>();
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    const field = m && FIELD_OF[m[1]!];
    if (!m || !field) continue;
    const labels = new Map([...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, unescapeLabel(l[2]!)]));
    const rule = labels.get('rule');
    const source = labels.get('source');
    if (rule === undefined || source === undefined) continue;
    const key = `${source}\0${rule}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { rule, source: source as Source, evaluations: 0, matches: 0, costSeconds: 0 }));
    row[field] = Number(m[3]);
  }
  return [...rows.values()];
}

/** The rule figures of the engine whose forwarder answers at `url` (its /metrics). */
export async function fetchFigures(url: string): Promise<{ ok: true; figures: RuleFigure[] } | { ok: false; message: string }> {
  const target = new URL(url);
  if (target.pathname === '/' || target.pathname === '') target.pathname = '/metrics';
  try {
    const res = await fetch(target, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) return { ok: false, message: `${target.href} answered HTTP ${res.status}` };
    return { ok: true, figures: figuresFromMetrics(await res.text()) };
  } catch (err) {
    return { ok: false, message: `cannot read ${target.href}: ${(err as Error).message}` };
  }
}

/** The figures of one rule as describe's JSON shows them. */
function figureJson(f: RuleFigure, all: readonly RuleFigure[]): { evaluations: number; matches: number; cost_seconds: number; cost_share: number } {
  const total = all.reduce((s, x) => s + x.costSeconds, 0);
  return { evaluations: f.evaluations, matches: f.matches, cost_seconds: f.costSeconds, cost_share: total > 0 ? f.costSeconds / total : 0 };
}

/**
 * Adds `figures` (figureJson) to each rule of a describe document whose figures the running
 * engine has (by name and source); rules it never evaluated get none.
 */
export function withFigures<D extends { rules?: Array<{ info: { name: string; source: string } }> }>(doc: D, figures: readonly RuleFigure[]): D {
  const by = new Map(figures.map((f) => [`${f.source}\0${f.rule}`, f]));
  return {
    ...doc,
    rules: doc.rules?.map((r) => {
      const f = by.get(`${r.info.source}\0${r.info.name}`);
      return f ? { ...r, figures: figureJson(f, figures) } : r;
    }),
  };
}

/** A table of the figures, most costly first: share of the cost, cost, evaluations, matches, time per evaluation. */
export function figuresTable(figures: readonly RuleFigure[]): string {
  const rows = rankByCost(figures).map((f) => [
    `${(f.share * 100).toFixed(1)}%`,
    `${(f.costSeconds * 1000).toFixed(3)} ms`,
    String(f.evaluations),
    String(f.matches),
    f.evaluations > 0 ? `${((f.costSeconds / f.evaluations) * 1e9).toFixed(1)} ns` : '-',
    f.source,
    f.rule,
  ]);
  const head = ['share', 'cost', 'evaluations', 'matches', 'per eval', 'source', 'rule'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === 6 ? c : i === 5 ? c.padEnd(width[i]!) : c.padStart(width[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)].join('\n');
}
