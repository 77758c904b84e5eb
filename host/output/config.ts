// The output keys of the `forwarder` configuration section (docs/forwarder.md): the stdout
// destination, the destinations of `outputs.<name>.<setting>` (destinations/table.ts, checked
// by its resolveOutputs, falcosidekick's environment names accepted) with their shared
// defaults, the global custom and templated fields, and Falco's JSON switches. host/config/
// composes these keys with the forwarder server's (host/forwarder/config.ts) under `forwarder`.
// resolveAggregation checks the `aggregation` keys (docs/aggregation.md) and answers, per rule,
// which window and key its alerts are aggregated with.
import type { ConfigProblem } from '../config/problem.js';
import { FALCO_JSON_DEFAULTS, type FalcoJsonConfig } from './falco-json.js';

/** What the fan-out (fanout.ts) reads from the configuration. */
export interface OutputConfig {
  /** Each alert's JSON line logged to stderr (falcosidekick's debug). */
  debugLogging: boolean;
  /** The stdout destination: one JSON line per alert. */
  stdout: boolean;
  /** The webhook destination's address (the same setting as outputs.webhook.address). */
  webhookUrl: string;
  /** Defaults of every destination's timeoutms, retries and queuesize. */
  webhookTimeoutMs: number;
  webhookRetries: number;
  queueSize: number;
  /** Fields added to every alert on every destination (falcosidekick's customfields/templatedfields). */
  customfields: Record<string, string>;
  templatedfields: Record<string, string>;
  /** `<name>: {<setting>: value}` per destination (destinations/table.ts). */
  outputs: Record<string, unknown>;
  /** Falco's JSON switches for the alert line (falco-json.ts), Falco's key names. */
  falco: FalcoJsonConfig;
  /** Output aggregation (aggregate.ts): off unless enabled here or for a rule in `rules`. */
  aggregation: AggregationConfig;
}

/** The `forwarder.aggregation` keys as written (docs/aggregation.md). */
export interface AggregationConfig {
  /** The defaults below apply to every rule's alerts (not the engine's own, source `internal`). */
  enabled: boolean;
  windowSeconds: number;
  /** Output field names making an alert's key; [] = every output field but evt.time. */
  key: string[];
  /** Most keys held at once; an alert of a new key past it passes unaggregated (counted). */
  maxKeys: number;
  /** `<rule name or glob pattern>: {enabled?, windowSeconds?, key?}`, overriding the defaults for the rules it names. */
  rules: Record<string, unknown>;
}

/** How one rule's alerts are aggregated. */
interface AggregationPolicy {
  windowMs: number;
  /** Output field names of the key; undefined = every output field but evt.time. */
  key: readonly string[] | undefined;
}

/** The checked aggregation settings: undefined policy = the rule's alerts pass untouched. */
export interface AggregationPlan {
  maxKeys: number;
  policyFor(rule: string, source: string): AggregationPolicy | undefined;
}

interface RuleEntry {
  match: (rule: string) => boolean;
  exact: boolean;
  enabled?: boolean;
  windowSeconds?: number;
  key?: string[];
}

/** Most rule names whose policy is remembered (POST / brings rule names from outside). */
const POLICY_CACHE = 4096;

function globMatcher(pattern: string): (rule: string) => boolean {
  if (!/[*?]/.test(pattern)) return (rule) => rule === pattern;
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
    's',
  );
  return (rule) => re.test(rule);
}

function checkWindow(v: unknown, key: string, problems: ConfigProblem[]): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 86_400) return v;
  problems.push({ key, message: `expected a number of seconds above 0 and at most 86400, got ${JSON.stringify(v)}` });
  return undefined;
}

function checkKey(v: unknown, key: string, problems: ConfigProblem[]): string[] | undefined {
  if (Array.isArray(v) && v.every((f) => typeof f === 'string' && f !== '')) return v as string[];
  problems.push({ key, message: 'expected a list of output field names, e.g. [container.id, proc.cmdline]' });
  return undefined;
}

function ruleEntry(pattern: string, raw: unknown, problems: ConfigProblem[]): RuleEntry | undefined {
  const at = `forwarder.aggregation.rules.${pattern}`;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ key: at, message: 'expected a mapping of enabled, windowSeconds, key' });
    return undefined;
  }
  const entry: RuleEntry = { match: globMatcher(pattern), exact: !/[*?]/.test(pattern) };
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'enabled') {
      if (typeof v === 'boolean') entry.enabled = v;
      else problems.push({ key: `${at}.enabled`, message: 'expected true or false' });
    } else if (k === 'windowSeconds') entry.windowSeconds = checkWindow(v, `${at}.windowSeconds`, problems);
    else if (k === 'key') entry.key = checkKey(v, `${at}.key`, problems);
    else problems.push({ key: `${at}.${k}`, message: 'unknown key (enabled, windowSeconds, key)' });
  }
  return entry;
}

/**
 * Checks `forwarder.aggregation` and builds the per-rule lookup. A rule takes the entry of
 * `rules` naming it exactly, else the first glob pattern (`*`, `?`) matching it, in file order;
 * the entry's keys override the defaults, and an entry turns aggregation on for its rules even
 * while the default is off, unless it says `enabled: false` (which turns them off).
 */
export function resolveAggregation(c: AggregationConfig): { plan: AggregationPlan; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const windowSeconds = checkWindow(c.windowSeconds, 'forwarder.aggregation.windowSeconds', problems) ?? 60;
  const key = checkKey(c.key, 'forwarder.aggregation.key', problems) ?? [];
  if (!Number.isInteger(c.maxKeys) || c.maxKeys < 1) problems.push({ key: 'forwarder.aggregation.maxKeys', message: `expected a whole number above 0, got ${c.maxKeys}` });
  const entries = Object.entries(c.rules ?? {}).flatMap(([pattern, raw]) => ruleEntry(pattern, raw, problems) ?? []);
  const exact = entries.filter((e) => e.exact);
  const globs = entries.filter((e) => !e.exact);
  const cache = new Map<string, AggregationPolicy | undefined>();
  function compute(rule: string, source: string): AggregationPolicy | undefined {
    const e = exact.find((x) => x.match(rule)) ?? globs.find((x) => x.match(rule));
    // a rule named in `rules` is aggregated unless its entry says enabled: false
    const enabled = e ? (e.enabled ?? true) : c.enabled && source !== 'internal';
    if (!enabled) return undefined;
    const k = e?.key ?? key;
    return { windowMs: (e?.windowSeconds ?? windowSeconds) * 1000, key: k.length > 0 ? k : undefined };
  }
  return {
    problems,
    plan: {
      maxKeys: c.maxKeys,
      policyFor(rule, source) {
        const id = `${source}\0${rule}`;
        if (cache.has(id)) return cache.get(id);
        if (cache.size >= POLICY_CACHE) cache.clear();
        const p = compute(rule, source);
        cache.set(id, p);
        return p;
      },
    },
  };
}

/** The defaults: stdout only. */
export function defaultOutputConfig(): OutputConfig {
  return {
    debugLogging: false,
    stdout: true,
    webhookUrl: '',
    webhookTimeoutMs: 5000,
    webhookRetries: 3,
    queueSize: 10000,
    customfields: {},
    templatedfields: {},
    outputs: {},
    falco: { ...FALCO_JSON_DEFAULTS, append_output: [] },
    aggregation: { enabled: false, windowSeconds: 60, key: [], maxKeys: 10_000, rules: {} },
  };
}
