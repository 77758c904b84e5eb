// Falco's falco.yaml as this engine's configuration (docs/falco.md has the table, key by key).
// A file is Falco's by its shape: its top-level keys are Falco's (rules_files, json_output,
// stdout_output, ...), whatever its name. Each top-level key is honoured with Falco's meaning,
// translated onto this engine's keys (json_* onto forwarder.falco, http_output onto the webhook
// output, priority onto rules.minPriority, ...), or answered with one located note saying why not;
// a key Falco does not have, or a plugin this engine cannot stand in for, is a located problem.
// config_files are read and merged as Falco does (append, override or add-only), each file a
// Falco file itself. Consumes the parsed document with its line counter; produces an overlay in
// this engine's configuration shape, notes and problems, each `file:line:col: key: why`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { isMap, isPair, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { ConfigProblem } from './problem.js';

type Mapping = Record<string, unknown>;

/** Keys only Falco's file has at its top: one of them marks a file as Falco's. */
const FALCO_MARKERS = [
  'rules_files',
  'rules_file',
  'config_files',
  'watch_config_files',
  'json_output',
  'stdout_output',
  'file_output',
  'http_output',
  'program_output',
  'syslog_output',
  'webserver',
  'engine',
  'load_plugins',
  'plugins',
  'priority',
  'log_level',
  'log_stderr',
  'falco_libs',
  'base_syscalls',
  'outputs_queue',
  'buffered_outputs',
];

/** Whether a parsed configuration document is Falco's, judged by its top-level keys. */
export function isFalcoShape(doc: unknown): boolean {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return false;
  return Object.keys(doc).some((k) => FALCO_MARKERS.includes(k));
}

/** What a Falco file becomes: this engine's keys, and a located line for each key not applied. */
export interface FalcoTranslation {
  overlay: Mapping;
  notes: string[];
  problems: ConfigProblem[];
}

/** Falco's log levels (falco_logger) onto this engine's four. */
const LOG_LEVEL: Record<string, string> = { emergency: 'error', alert: 'error', critical: 'error', error: 'error', warning: 'warning', notice: 'info', info: 'info', debug: 'debug' };

/** Falco's plugins this engine provides itself: the name, and what stands in for it. */
const BUILT_IN_PLUGINS: Record<string, string> = {
  container: 'container and pod fields come from the runtimes directly (containers.*, docs/containers.md)',
  k8saudit: 'orchestrator audit events arrive on the HTTPS webhook source (webhook.*, docs/webhook.md)',
};

const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

/** One translation in progress: where each key stands, and what it has produced so far. */
class Translator {
  readonly overlay: Mapping = {};
  readonly notes: string[] = [];
  readonly problems: ConfigProblem[] = [];
  constructor(
    private readonly file: string,
    private readonly where: (key: string) => string,
  ) {}

  /** Sets a dotted key of the overlay, creating its sections. */
  set(path: string, value: unknown): void {
    const parts = path.split('.');
    let node = this.overlay;
    for (const p of parts.slice(0, -1)) node = (isMapping(node[p]) ? node[p] : (node[p] = {})) as Mapping;
    node[parts.at(-1)!] = value;
  }

  note(key: string, why: string): void {
    this.notes.push(`${this.where(key)}: ${key}: ${why}`);
  }

  problem(key: string, why: string): void {
    this.problems.push({ key: `${this.where(key)}: ${key}`, message: why });
  }

  /** A relative path of the file is taken from the file's directory. */
  path(p: string): string {
    return isAbsolute(p) ? p : join(dirname(this.file), p);
  }
}

type Handler = (t: Translator, v: unknown, key: string) => void;

const bool = (v: unknown): boolean => v === true || (typeof v === 'string' && ['true', 'yes', 'on'].includes(v.toLowerCase()));

/** A section that is on when its `enabled` is. */
const enabled = (v: unknown): boolean => isMapping(v) && bool(v.enabled);

/** rules_files entries: each file or directory as rules.files has them; a missing one is a note. */
const rulesFiles: Handler = (t, v, key) => {
  const files: string[] = [];
  const missing: string[] = [];
  for (const f of list(v).map(String)) (existsSync(t.path(f)) ? files : missing).push(t.path(f));
  t.set('rules.files', files);
  if (missing.length > 0) t.note(key, `not found, not loaded: ${missing.join(', ')} (the built-in sets rules.builtIn stand for Falco's falco_rules.yaml)`);
};

/** Keys whose value is honoured when it is Falco's default and answered otherwise. */
const onlyDefault =
  (expected: unknown, why: string): Handler =>
  (t, v, key) => {
    if (JSON.stringify(v) !== JSON.stringify(expected)) t.note(key, `not applied: ${why}`);
  };

const notApplied =
  (why: string): Handler =>
  (t, _v, key) =>
    t.note(key, `not applied: ${why}`);

/** Every top-level key of Falco 0.45's falco.yaml. */
const HANDLERS: Record<string, Handler> = {
  rules_files: rulesFiles,
  rules_file: rulesFiles,
  config_files: () => undefined, // read by translateFalco before the other keys
  watch_config_files: (t, v) => t.set('rules.watch', bool(v)),
  engine: (t, v, key) => {
    const kind = isMapping(v) ? String(v.kind ?? 'modern_ebpf') : 'modern_ebpf';
    if (kind === 'modern_ebpf') {
      const preset = isMapping(v) && isMapping(v.modern_ebpf) ? v.modern_ebpf.buf_size_preset : undefined;
      if (preset !== undefined) t.set('syscall.bufSizePreset', Number(preset));
      t.note(
        key,
        `kind modern_ebpf is this engine's CO-RE probe${preset !== undefined ? '; buf_size_preset onto syscall.bufSizePreset' : ''}; cpus_for_each_buffer and drop_failed_exit are not applied: one ring buffer, of the size Falco's buffers would take together with 2 CPUs each`,
      );
    } else if (kind === 'replay') t.note(key, 'kind replay not applied: `rae replay --input FILE` evaluates recorded events; rae run reads the live kernel');
    else t.problem(key, `kind ${kind} is not supported: this engine has one kernel driver, the CO-RE eBPF probe (modern_ebpf)`);
  },
  capture: (t, v, key) => {
    if (enabled(v)) t.problem(key, 'capture.enabled: true is not supported: this engine writes no capture files');
    else t.note(key, 'not applied: this engine writes no capture files (enabled: false, so nothing changes)');
  },
  load_plugins: (t, v, key) => {
    const refused = list(v)
      .map(String)
      .filter((p) => !(p in BUILT_IN_PLUGINS));
    if (refused.length > 0) t.problem(key, `plugins ${refused.join(', ')} cannot be loaded: this engine runs no Falco plugins (container and k8saudit are built in)`);
    for (const p of list(v).map(String)) if (p in BUILT_IN_PLUGINS) t.note(key, `${p}: ${BUILT_IN_PLUGINS[p]}`);
  },
  plugins: (t, v, key) => {
    const names = list(v).map((p) => (isMapping(p) ? String(p.name) : String(p)));
    const known = names.filter((n) => n in BUILT_IN_PLUGINS);
    t.note(key, `plugin configurations not applied: this engine runs no Falco plugins${known.length > 0 ? `; ${known.map((n) => `${n}: ${BUILT_IN_PLUGINS[n]}`).join('; ')}` : ''}`);
  },
  plugins_hostinfo: onlyDefault(true, 'host information is always provided'),
  time_format_iso_8601: (t, v) => t.set('forwarder.falco.time_format_iso_8601', bool(v)),
  buffer_format_base64: onlyDefault(false, "buffers print as libsinsp's default format (a byte outside 0x20..0x7e is .)"),
  priority: (t, v) => t.set('rules.minPriority', String(v)),
  json_output: (t, v, key) => {
    if (!bool(v)) t.note(key, 'false not applied: stdout carries one JSON line per alert always (set forwarder.stdout: false for none); the alert text is its output property');
  },
  json_include_output_property: (t, v) => t.set('forwarder.falco.json_include_output_property', bool(v)),
  json_include_message_property: (t, v) => t.set('forwarder.falco.json_include_message_property', bool(v)),
  json_include_tags_property: (t, v) => t.set('forwarder.falco.json_include_tags_property', bool(v)),
  json_include_output_fields_property: onlyDefault(true, 'output_fields are always included'),
  buffered_outputs: (t, v, key) => {
    if (bool(v)) t.note(key, 'true not applied: each alert line is written whole as it is raised');
  },
  rule_matching: (t, v) => t.set('rules.ruleMatching', String(v)),
  outputs_queue: (t, v, key) => {
    const capacity = isMapping(v) ? Number(v.capacity ?? 0) : 0;
    if (capacity > 0) t.set('forwarder.queueSize', capacity);
    else t.note(key, `capacity 0 (unbounded) not applied: every destination's queue is bounded (forwarder.queueSize, default 10000), a full one drops and counts`);
  },
  append_output: (t, v, key) => {
    // suggested_output appends the fields extractor plugins suggest; no plugin runs here, so there are none
    const entries = list(v).map((e) => (isMapping(e) ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'suggested_output')) : e));
    if (list(v).some((e) => isMapping(e) && 'suggested_output' in e)) t.note(key, 'suggested_output: no plugin suggests fields here, so there are none to append; match, extra_output and extra_fields apply');
    t.set(
      'forwarder.falco.append_output',
      entries.filter((e) => !isMapping(e) || Object.keys(e).length > 0),
    );
  },
  stdout_output: (t, v) => t.set('forwarder.stdout', enabled(v)),
  syslog_output: (t, v, key) => {
    if (enabled(v)) t.note(key, 'not applied: this engine writes no local syslog; forwarder.outputs.syslog sends alerts to a syslog server (host, port)');
  },
  file_output: (t, v) => {
    if (!enabled(v) || !isMapping(v)) return;
    t.set('forwarder.outputs.file', { filename: t.path(String(v.filename ?? '')), keep_alive: bool(v.keep_alive) });
  },
  program_output: (t, v) => {
    if (!enabled(v) || !isMapping(v)) return;
    t.set('forwarder.outputs.program', { program: String(v.program ?? ''), keep_alive: bool(v.keep_alive) });
  },
  http_output: (t, v, key) => {
    if (!enabled(v) || !isMapping(v)) return;
    const out: Mapping = { address: String(v.url ?? '') };
    if (bool(v.insecure)) out.checkcert = false;
    if (bool(v.mtls)) Object.assign(out, { mutualtls: true, mtlsclientcert: String(v.client_cert ?? ''), mtlsclientkey: String(v.client_key ?? '') });
    if (v.ca_cert) out.mtlscacert = String(v.ca_cert);
    if (v.user_agent) out.customheaders = { 'User-Agent': String(v.user_agent) };
    if (bool(v.compress_uploads)) out.gzip = true;
    t.set('forwarder.outputs.webhook', out);
    t.note(key, 'onto forwarder.outputs.webhook (url, insecure, mtls, client_cert/key, ca_cert, user_agent, compress_uploads); ca_bundle, ca_path, echo, keep_alive and max_consecutive_timeouts not applied');
  },
  webserver: (t, v, key) => {
    if (!isMapping(v)) return;
    t.set('forwarder.enabled', bool(v.enabled));
    if (v.listen_port !== undefined) t.set('forwarder.port', Number(v.listen_port));
    if (v.listen_address !== undefined) t.set('forwarder.address', String(v.listen_address));
    if (bool(v.ssl_enabled)) {
      const pem = t.path(String(v.ssl_certificate ?? ''));
      t.set('forwarder.tlsCertFile', pem);
      t.set('forwarder.tlsKeyFile', pem);
    }
    const path = String(v.k8s_healthz_endpoint ?? '/healthz');
    t.note(
      key,
      `onto the forwarder's server (enabled, listen_port, listen_address, ssl_*): /healthz${path === '/healthz' ? '' : ` (not ${path})`} and /metrics (always, prometheus_metrics_enabled not needed) beside falcosidekick's endpoints; threadiness not applied`,
    );
  },
  log_stderr: onlyDefault(true, 'logs always go to stderr'),
  log_syslog: onlyDefault(false, 'logs go to stderr only, never to syslog'),
  log_level: (t, v, key) => {
    const level = LOG_LEVEL[String(v)];
    if (level) t.set('logLevel', level);
    else t.problem(key, `unknown level '${String(v)}' (expected ${Object.keys(LOG_LEVEL).join(', ')})`);
  },
  libs_logger: notApplied("there are no libs; the engine's own log lines follow log_level"),
  output_timeout: notApplied('outputs never block the engine: each destination has its own bounded queue (forwarder.webhookTimeoutMs bounds one send)'),
  syscall_event_timeouts: notApplied('the probe reports no event timeouts; a source that stops is reported by /healthz'),
  syscall_event_drops: notApplied('drops are always counted (enginesecurity_engine_*_dropped_total) and raised as an internal alert; no rate or actions to set'),
  metrics: notApplied('Prometheus metrics are always served on /metrics; no periodic metrics alert (output_rule, interval, output_file)'),
  base_syscalls: (t, v, key) => {
    const custom = isMapping(v) ? list(v.custom_set) : [];
    if (custom.length > 0 || (isMapping(v) && bool(v.all))) t.problem(key, 'custom_set and all are not supported: the probe collects the syscalls the loaded rules need, and the process events its state needs');
    else t.note(key, "the probe collects the syscalls the loaded rules need and the process events its state needs (Falco's default); repair not applied");
  },
  falco_libs: (t, v, key) => {
    if (isMapping(v) && v.snaplen !== undefined) t.set('syscall.snaplen', Number(v.snaplen));
    t.note(key, 'snaplen onto syscall.snaplen; thread_table_size and the purging settings not applied: the thread table is sized by the module');
  },
};

/** The keys Falco 0.45's falco.yaml has at its top, in the handlers' order (docs/falco.md's table). */
export const FALCO_KEYS = Object.keys(HANDLERS);

/** Falco's config_files merge strategies. */
type Strategy = 'append' | 'override' | 'add-only';

/** Merges a config file's top-level keys into `doc` with Falco's strategy; returns the keys it set. */
function mergeTop(doc: Mapping, add: Mapping, strategy: Strategy): string[] {
  const set: string[] = [];
  for (const [k, v] of Object.entries(add)) {
    if (k in doc && strategy === 'add-only') continue;
    doc[k] = k in doc && strategy === 'append' && Array.isArray(doc[k]) && Array.isArray(v) ? [...(doc[k] as unknown[]), ...v] : v;
    set.push(k);
  }
  return set;
}

/** The YAML files a config_files entry names (a directory: its *.yaml and *.yml in name order). */
function entryFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

/** Where each top-level key of a document is: `file:line:col`. */
function keyPositions(document: Document, lines: LineCounter, file: string, into: Map<string, string>, keys?: ReadonlySet<string>): void {
  if (!isMap(document.contents)) return;
  for (const item of document.contents.items) {
    if (!isPair(item) || !isScalar(item.key) || !item.key.range) continue;
    const key = String(item.key.value);
    if (keys && !keys.has(key)) continue;
    const { line, col } = lines.linePos(item.key.range[0]);
    into.set(key, `${file}:${line}:${col}`);
  }
}

/** Reads the config_files of a Falco document into it (a key taken from one is located there); a missing entry is a note, an unreadable one a problem. */
function readConfigFiles(t: Translator, doc: Mapping, at: Map<string, string>): void {
  for (const entry of list(doc.config_files)) {
    const path = t.path(String(isMapping(entry) ? entry.path : entry));
    const strategy = (isMapping(entry) && entry.strategy ? String(entry.strategy) : 'append') as Strategy;
    if (!['append', 'override', 'add-only'].includes(strategy)) {
      t.problem('config_files', `strategy '${strategy}' of ${path}: expected append, override or add-only`);
      continue;
    }
    if (!existsSync(path)) {
      t.note('config_files', `${path} not found, nothing merged from it`);
      continue;
    }
    for (const file of entryFiles(path)) {
      const lines = new LineCounter();
      const document = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines });
      const add: unknown = document.errors.length > 0 ? undefined : document.toJS();
      if (document.errors.length > 0) t.problem('config_files', `${file}: ${document.errors[0]!.message}`);
      else if (isMapping(add)) keyPositions(document, lines, file, at, new Set(mergeTop(doc, add, strategy)));
      else if (add !== null && add !== undefined) t.problem('config_files', `${file}: expected a mapping`);
    }
  }
}

/** Translates a Falco configuration document (already parsed, with its line counter) from `file`. */
export function translateFalco(document: Document, lines: LineCounter, file: string): FalcoTranslation {
  const at = new Map<string, string>();
  keyPositions(document, lines, file, at);
  const t = new Translator(file, (key) => at.get(key) ?? file);
  const doc = document.toJS() as Mapping;
  readConfigFiles(t, doc, at);
  for (const [key, value] of Object.entries(doc)) {
    const handler = HANDLERS[key];
    if (handler) handler(t, value, key);
    else t.problem(key, "unknown key (not a key of Falco 0.45's falco.yaml; see docs/falco.md)");
  }
  return { overlay: t.overlay, notes: t.notes, problems: t.problems };
}
