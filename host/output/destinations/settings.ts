// Output settings: their kinds, the settings every output has (falcosidekick's minimumpriority,
// customfields, templatedfields, plus our queue knobs), and how a row of the output table
// (table.ts) is resolved from `forwarder.outputs.<name>.<setting>` in the config file and from
// falcosidekick's environment variables (`<OUTPUT>_<SETTING>`, e.g. SLACK_WEBHOOKURL; the
// environment wins over the file, as viper's AutomaticEnv does, and a map variable adds its
// entries to the file's). Problems name the key.
import { parsePriority } from '../../engine/priority.js';
import type { Destination } from '../../metrics/index.js';
import type { ConfigProblem } from '../../config/problem.js';
import { parseTemplate } from './template.js';
import type { OutputContext, Sender } from './types.js';

export type SettingValue = string | number | boolean | Record<string, string> | string[];
export type SettingKind = 'string' | 'number' | 'boolean' | 'map' | 'list';

/** One setting of an output. */
export interface SettingSpec {
  kind: SettingKind;
  default: SettingValue;
  /** One line for docs/forwarder.md. */
  doc: string;
  /** The environment variable; default `<row env>_<SETTING>` upper-cased. */
  env?: string;
  /** Further check of a well-typed value: undefined if fine, else the reason. */
  check?: (v: SettingValue) => string | undefined;
}

/** One output (a row of the table in table.ts). */
export interface OutputRow {
  /** Config key under forwarder.outputs and the `destination` metric label. */
  name: Destination;
  /** falcosidekick's environment prefix (e.g. SLACK). */
  env: string;
  /** The setting whose non-empty value turns the output on (falcosidekick: its address key). */
  enabledBy: string;
  /** The output's own settings (the common ones are added to every row). */
  settings: Record<string, SettingSpec>;
  /** Builds the transport; the module is imported here, lazily, so loading config loads no protocol client. */
  create(s: OutputSettings, ctx: OutputContext): Sender | Promise<Sender>;
}

/** A resolved setting set: every setting of the row with a well-typed value. */
export class OutputSettings {
  constructor(
    readonly name: string,
    private readonly values: Record<string, SettingValue>,
  ) {}
  private get(key: string): SettingValue {
    if (!Object.hasOwn(this.values, key)) throw new Error(`${this.name} has no setting ${key}`);
    return this.values[key] as SettingValue;
  }
  string(key: string): string {
    return this.get(key) as string;
  }
  number(key: string): number {
    return this.get(key) as number;
  }
  bool(key: string): boolean {
    return this.get(key) as boolean;
  }
  map(key: string): Record<string, string> {
    return this.get(key) as Record<string, string>;
  }
  list(key: string): string[] {
    return this.get(key) as string[];
  }
}

const checkPriority = (v: SettingValue): string | undefined =>
  v === '' || parsePriority(v as string) ? undefined : `unknown priority ${JSON.stringify(v)} (expected emergency, alert, critical, error, warning, notice, informational or debug)`;

function checkTemplates(v: SettingValue): string | undefined {
  for (const [k, t] of Object.entries(v as Record<string, string>)) {
    try {
      parseTemplate(t);
    } catch (err) {
      return `${k}: ${(err as Error).message}`;
    }
  }
  return undefined;
}

const nonNegative = (v: SettingValue): string | undefined => (Number.isInteger(v) && (v as number) >= 0 ? undefined : 'expected a whole number, 0 or more');
const positive = (v: SettingValue): string | undefined => (Number.isInteger(v) && (v as number) > 0 ? undefined : 'expected a whole number above 0');

/** Settings every output has. Defaults of retries/timeoutms/queuesize come from forwarder.webhookRetries, webhookTimeoutMs, queueSize. */
export function commonSettings(defaults: { retries: number; timeoutMs: number; queueSize: number }): Record<string, SettingSpec> {
  return {
    minimumpriority: { kind: 'string', default: '', check: checkPriority, doc: 'least severe priority sent ("" = all); the /test alert always passes' },
    customfields: { kind: 'map', default: {}, doc: 'fields added to output_fields (env `k:v,k2:v2`), after forwarder.customfields' },
    templatedfields: { kind: 'map', default: {}, check: checkTemplates, doc: 'fields rendered per alert from output_fields (`{{ index . "k8s.ns.name" }}`, see Templated fields)' },
    retries: { kind: 'number', default: defaults.retries, check: nonNegative, doc: 'attempts after a failed one (backoff 100 ms doubling to 5 s, ±20 % jitter)' },
    timeoutms: { kind: 'number', default: defaults.timeoutMs, check: positive, doc: "one attempt's deadline" },
    queuesize: { kind: 'number', default: defaults.queueSize, check: positive, doc: 'alerts waiting; a full queue drops (counted, alerted)' },
  };
}

/** falcosidekick's environment syntax for maps: `k:v,k2:v2` (split at the first `:`). */
function parseEnvMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(',')) {
    const i = item.indexOf(':');
    if (i <= 0) continue;
    out[item.slice(0, i).trim()] = item.slice(i + 1).trim();
  }
  return out;
}

const TRUE = ['1', 't', 'true', 'yes', 'on'];
const FALSE = ['0', 'f', 'false', 'no', 'off', ''];

/** Converts a file value (YAML) or an environment string to the setting's kind; a string is the reason on failure. */
export function coerce(kind: SettingKind, v: unknown, fromEnv: boolean): { value: SettingValue } | string {
  switch (kind) {
    case 'string':
      if (typeof v === 'string') return { value: v };
      if (!fromEnv && (typeof v === 'number' || typeof v === 'boolean')) return { value: String(v) };
      return 'expected a string';
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      return Number.isFinite(n) ? { value: n } : 'expected a number';
    }
    case 'boolean':
      if (typeof v === 'boolean') return { value: v };
      if (typeof v === 'string' && TRUE.includes(v.toLowerCase())) return { value: true };
      if (typeof v === 'string' && FALSE.includes(v.toLowerCase())) return { value: false };
      return 'expected true or false';
    case 'map':
      if (typeof v === 'string') return { value: parseEnvMap(v) };
      if (v === null) return { value: {} };
      if (typeof v !== 'object' || Array.isArray(v)) return 'expected a mapping (or `k:v,k2:v2`)';
      {
        const out: Record<string, string> = {};
        for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
          if (typeof x === 'object' && x !== null) return `${k}: expected a scalar value`;
          out[k] = x === null ? '' : String(x);
        }
        return { value: out };
      }
    case 'list':
      if (typeof v === 'string')
        return {
          value: v
            .split(',')
            .map((x) => x.trim())
            .filter((x) => x !== ''),
        };
      if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return { value: v.map(String) };
      return 'expected a list (or a comma-separated string)';
  }
}

/** The environment variable of a setting. */
export function envName(row: Pick<OutputRow, 'env'>, key: string, spec: SettingSpec): string {
  return spec.env ?? `${row.env}_${key.toUpperCase()}`;
}

/** A row resolved: its settings, whether it is on. */
export interface ResolvedOutput {
  row: OutputRow;
  settings: OutputSettings;
  enabled: boolean;
}

/**
 * Resolves one row from its file mapping (`raw`, keys case-insensitive) and the environment.
 * Problems carry the dotted key (and the variable, when the value came from the environment).
 */
export function resolveRow(row: OutputRow, raw: unknown, env: NodeJS.ProcessEnv, common: Record<string, SettingSpec>, problems: ConfigProblem[]): ResolvedOutput {
  const prefix = `forwarder.outputs.${row.name}`;
  const specs = { ...common, ...row.settings };
  const values: Record<string, SettingValue> = {};
  for (const [k, spec] of Object.entries(specs)) values[k] = spec.default;
  if (raw !== undefined && raw !== null) {
    if (typeof raw !== 'object' || Array.isArray(raw)) problems.push({ key: prefix, message: 'expected a mapping' });
    else
      for (const [k0, v] of Object.entries(raw as Record<string, unknown>)) {
        const k = k0.toLowerCase();
        const spec = specs[k];
        if (!spec) {
          problems.push({ key: `${prefix}.${k0}`, message: `unknown key (settings of ${row.name}: ${Object.keys(specs).join(', ')})` });
          continue;
        }
        const c = coerce(spec.kind, v, false);
        if (typeof c === 'string') problems.push({ key: `${prefix}.${k0}`, message: c });
        else values[k] = c.value;
      }
  }
  for (const [k, spec] of Object.entries(specs)) {
    const name = envName(row, k, spec);
    const text = env[name];
    if (text === undefined) continue;
    const c = coerce(spec.kind, text, true);
    if (typeof c === 'string') problems.push({ key: `${prefix}.${k} (from ${name})`, message: c });
    // falcosidekick adds a map variable's entries to the file's (WEBHOOK_CUSTOMHEADERS, CUSTOMFIELDS).
    else values[k] = spec.kind === 'map' ? { ...(values[k] as Record<string, string>), ...(c.value as Record<string, string>) } : c.value;
  }
  for (const [k, spec] of Object.entries(specs)) {
    const why = spec.check?.(values[k] as SettingValue);
    if (why) problems.push({ key: `${prefix}.${k}`, message: why });
  }
  const on = values[row.enabledBy];
  return { row, settings: new OutputSettings(row.name, values), enabled: on !== '' && on !== false && on !== undefined };
}
