// Engine configuration: every setting has a default, so `rae run` needs no file. A YAML file
// (`--config FILE`) overrides any subset; unknown keys are reported, not ignored silently. Then,
// in this order, environment variables RAE_<SECTION>_<KEY> (falcosidekick's style: the section and
// the key upper-cased, underscores inside the key optional, e.g. RAE_FORWARDER_WEBHOOKURL) and
// `-o key=value` options (Falco's) override single keys, typed by the key's default.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { isFalcoShape, translateFalco } from './falco-yaml.js';
import { defaultApiConfig, type ApiConfig } from '../api/config.js';
import { defaultForwarderServerConfig, type ForwarderServerConfig } from '../forwarder/config.js';
import { defaultOutputConfig, resolveAggregation, type OutputConfig } from '../output/config.js';
import { resolveOutputs } from '../output/destinations/table.js';
import { DEFAULT_EXPAND_LIMITS, DEFAULT_RULES_BOUNDS, HARD_MAX_DEPTH, REGEX_HARD_LIMITS, type RulesBounds } from '../engine/index.js';
import { DEFAULT_MAX_OUTPUT_FIELD_BYTES } from '../output/from-match.js';
import type { ClientLimits } from '../net/connections.js';
import type { ConfigProblem } from './problem.js';
import { setKey } from './option.js';
import { DEFAULT_RUNTIMES, type ContainersConfig } from '../sources/container/index.js';
import { checkDnsConfig, DNS_DEFAULTS, type DnsConfig } from '../sources/dns/resolver.js';
import { MAX_DATA } from '../abi/records.js';
import { DEFAULT_BUF_SIZE_PRESET, DEFAULT_SNAPLEN, MAX_BUF_SIZE_PRESET } from '../sources/syscall/addon.js';

type RuleMatching = 'first' | 'all';

/** Least severe log line written to stderr (Falco's log_level). */
export const LOG_LEVELS = ['error', 'warning', 'info', 'debug'] as const;

/** The whole configuration, with every key present. */
export interface Config {
  /** Where generated TLS material, the API database and watched resources live. */
  stateDir: string;
  /** Host name in alerts (Falco: $FALCO_HOSTNAME, else gethostname()). */
  hostname?: string;
  /** Least severe engine log line written to stderr: error, warning, info or debug (Falco log_level). */
  logLevel: string;
  /** The rules and their bounds; the load bounds (maxRules ... maxRegexNesting) are the engine's RulesBounds (host/engine/rules-bounds.ts, docs/resources.md "Bounds"): past one the load is refused with a located error. */
  rules: RulesBounds & {
    /** Built-in rule sets from rules/ (names as in builtInRulesList). */
    builtIn: string[];
    /** Extra rule files, loaded after the built-in sets, in order. */
    files: string[];
    ruleMatching: RuleMatching;
    /** Least severe priority whose rules are enabled (Falco `priority`). */
    minPriority: string;
    /** Seconds without a rules change after which the compile worker (about 200 MB) stops; 0 keeps it running. */
    compilerIdleSeconds: number;
    /**
     * Keep binaryen's compiled module (the compiler's back end) in the process once a compile worker
     * used it, so the next worker starts it optimised: a cold rules change up to 0.6 s sooner to the
     * compiled tier (0.2 s on a quiet machine), for about 10-20 MB more resident at rest (docs/resources.md "How the ruleset is made").
     */
    compilerKeepsBackend: boolean;
    /** Most nodes one condition may have once its macros are expanded (docs/resources.md "Bounds"). */
    maxExpandedNodes: number;
    /** Most nodes the expanded conditions of all loaded rules may have together. */
    maxExpandedNodesTotal: number;
    /** Longest field value an alert carries (output_fields and the message), in bytes; a longer one is cut and marked `…(truncated N bytes)`. */
    maxOutputFieldBytes: number;
    /** Deadline of one ruleset compile; past it the compile worker is stopped and the load fails (the running ruleset stays); 0: none. */
    compileTimeoutSeconds: number;
    /** The compile worker's heap cap (MB): a compile that needs more fails the load instead of the process. */
    compileWorkerHeapMb: number;
    /** Count every rule's evaluations, matches and cost (docs/rule-cost.md); false only to measure what counting costs. */
    ruleCounters: boolean;
    /** Falco's watch_config_files: a change to a file or directory in `files` reloads the rules, as SIGHUP does. */
    watch: boolean;
    /** Falco's -T: rules with any of these tags are disabled. */
    disableTags: string[];
    /** Falco's -t: when not empty, only rules with one of these tags are enabled. */
    enableTags: string[];
    /** Falco's -D: rules whose name contains one of these substrings are disabled. */
    disableNames: string[];
  };
  /**
   * Audit webhook (docs/webhook.md): TLS files when set, else generated into <stateDir>/webhook-tls;
   * queue bounded in events and bytes; events bounded in bytes and nesting depth; on stop, accepted
   * events are evaluated for at most drainTimeoutSeconds; clients bounded in connections and in
   * the time to finish the TLS handshake, send headers and the whole request (host/net/connections.ts).
   * The API server authenticates with the client certificate the engine's CA issues
   * (requireClientCert, the default: clients without one are refused); connections with a verified
   * certificate are bounded apart (maxAuthenticatedConnections) from the others
   * (maxConnectionsPerClient per address, maxUnauthenticatedConnections in total).
   * clientCaFile (PEM, '' = the engine's own CA in <stateDir>/webhook-tls) verifies client
   * certificates, so every node of a cluster can share one; clientCertFile and clientKeyFile are
   * the API server's pair that CA issued, for `rae webhook-config` and `rae event-generator`.
   */
  webhook: {
    enabled: boolean;
    address: string;
    port: number;
    path: string;
    sysPrefix: string;
    tlsCertFile: string;
    tlsKeyFile: string;
    tlsCaFile: string;
    clientCaFile: string;
    clientCertFile: string;
    clientKeyFile: string;
    queueSize: number;
    queueBytes: number;
    maxBodyBytes: number;
    maxEventBytes: number;
    maxEventDepth: number;
    /** How request bodies are read: `bytes` reads each event's fields from the body's bytes, `objects` parses events into objects first. */
    decoder: 'bytes' | 'objects';
    drainTimeoutSeconds: number;
    requireClientCert: boolean;
    maxUnauthenticatedConnections: number;
    maxAuthenticatedConnections: number;
  } & ClientLimits;
  /**
   * Event forwarder (docs/forwarder.md): the server keys (falcosidekick's HTTP face,
   * host/forwarder/config.ts) and the output keys (stdout, `outputs.<name>.<setting>`, global
   * fields, Falco's JSON switches: host/output/config.ts), one section as falcosidekick has it.
   */
  forwarder: ForwarderServerConfig & OutputConfig;
  /**
   * The kernel source: snaplen is Falco's falco_libs.snaplen (-S): bytes of a syscall's I/O buffer
   * recorded, 0..MAX_DATA (4096). optional: whether the engine may be ready while the probe cannot
   * run here (no privilege, no BTF...); false (the default) keeps /healthz and /readyz at 503 then,
   * so a node's engine blind to syscalls is not in service (docs/forwarder.md "Readiness").
   * bufSizePreset: Falco's engine.modern_ebpf.buf_size_preset, 1..10: the ring buffer takes what
   * Falco's driver would on this node's CPUs (ringBytesFor: 8 MiB for every 2 CPUs at 4).
   * filterOpens: read-only opens no loaded rule can match stay in the kernel (sources/syscall/
   * open-filter.ts); false records every open of the syscalls the rules name.
   */
  syscall: { snaplen: number; optional: boolean; bufSizePreset: number; filterOpens: boolean };
  /**
   * Module resources (docs/resources.md): the watched directory ('' = <stateDir>/resources), the
   * apiVersion group, and how many manifest files of what size are read; watchApi: also list and
   * watch the objects of the orchestrator's API, through `kubeconfig` ('' = the pod's service
   * account), the first ruleset waiting up to apiSyncTimeoutSeconds for their first list;
   * moduleConfigStatus: write the ModuleConfig's status too (false where another owner writes it: Deckhouse).
   */
  resources: { dir: string; apiGroup: string; maxFiles: number; maxFileBytes: number; watchApi: boolean; kubeconfig: string; apiSyncTimeoutSeconds: number; moduleConfigStatus: boolean };
  /** controlPlaneManager: publish the API server's audit webhook configuration while the audit source runs ('' = <stateDir>/audit-webhook-config.yaml). */
  module: { controlPlaneManager: boolean; auditWebhookConfigFile: string };
  /**
   * Container and pod metadata (docs/containers.md): each runtime's sockets (Falco's container
   * plugin defaults; a socket that does not exist is skipped with one log line) and whether to use it.
   */
  containers: { enabled: boolean } & ContainersConfig;
  /**
   * Domain names of fd.sip.name, fd.cip.name, fd.lip.name and fd.rip.name (README, host/sources/dns/):
   * the names the rules compare them with are resolved off the event path and refreshed with
   * libsinsp's backoff (refreshSeconds, doubled while an answer is unchanged, up to
   * maxRefreshSeconds); servers empty = the system resolver (getaddrinfo), else A/AAAA queries to them.
   */
  dns: { enabled: boolean } & DnsConfig;
  /** REST API (docs/api.md, host/api/config.ts). */
  api: ApiConfig;
  /**
   * The engine's own faults (docs/api.md, "The engine's own faults"): reported to `dsn` (any
   * Sentry-protocol DSN); when it is empty and the API is enabled, to the engine's own project.
   */
  errorTracking: { dsn: string };
  /**
   * The web console (docs/console.md): its own server, loopback by default, serving the pages and
   * the JSON they read from the API's database; off when `enabled` is false or the API is off.
   */
  console: { enabled: boolean; address: string; port: number };
}

/** The default state directory: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine for root, else ~/.local/state. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RAE_STATE_DIR) return env.RAE_STATE_DIR;
  if (process.getuid?.() === 0) return '/var/lib/runtime-audit-engine';
  return join(env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'runtime-audit-engine');
}

/** The defaults: every source and server on, built-in syscall and audit rules. */
export function defaultConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    stateDir: defaultStateDir(env),
    logLevel: 'info',
    rules: {
      builtIn: ['syscall', 'orchestrator-audit'],
      files: [],
      ruleMatching: 'first',
      minPriority: 'Debug',
      compilerIdleSeconds: 60,
      compilerKeepsBackend: false,
      maxExpandedNodes: DEFAULT_EXPAND_LIMITS.maxNodes,
      maxExpandedNodesTotal: DEFAULT_EXPAND_LIMITS.maxTotalNodes,
      maxRules: DEFAULT_RULES_BOUNDS.maxRules,
      maxListItems: DEFAULT_RULES_BOUNDS.maxListItems,
      maxConditionBytes: DEFAULT_RULES_BOUNDS.maxConditionBytes,
      maxOutputBytes: DEFAULT_RULES_BOUNDS.maxOutputBytes,
      maxConditionDepth: DEFAULT_RULES_BOUNDS.maxConditionDepth,
      maxGlobBytes: DEFAULT_RULES_BOUNDS.maxGlobBytes,
      maxRegexRepeat: DEFAULT_RULES_BOUNDS.maxRegexRepeat,
      maxRegexAtoms: DEFAULT_RULES_BOUNDS.maxRegexAtoms,
      maxRegexNesting: DEFAULT_RULES_BOUNDS.maxRegexNesting,
      maxOutputFieldBytes: DEFAULT_MAX_OUTPUT_FIELD_BYTES,
      compileTimeoutSeconds: 120,
      compileWorkerHeapMb: 2048,
      ruleCounters: true,
      watch: true,
      disableTags: [],
      enableTags: [],
      disableNames: [],
    },
    webhook: {
      enabled: true,
      address: '127.0.0.1',
      port: 9765,
      path: '/orchestrator-audit',
      sysPrefix: 'd8',
      tlsCertFile: '',
      tlsKeyFile: '',
      tlsCaFile: '',
      clientCaFile: '',
      clientCertFile: '',
      clientKeyFile: '',
      queueSize: 10000,
      queueBytes: 64 * 1024 * 1024,
      maxBodyBytes: 12 * 1024 * 1024,
      maxEventBytes: 256 * 1024,
      maxEventDepth: 300,
      decoder: 'bytes',
      drainTimeoutSeconds: 20,
      requireClientCert: true,
      maxConnectionsPerClient: 64,
      maxUnauthenticatedConnections: 256,
      maxAuthenticatedConnections: 64,
      // client-go's TLS handshake timeout: the API server's webhook client waits 10 s itself, so an
      // honest handshake delayed by a loaded node is not cut before its client gives up; starvation
      // is prevented by the oldest-first close of handshaking connections, not by this deadline.
      handshakeTimeoutSeconds: 10,
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
    },
    forwarder: { ...defaultForwarderServerConfig(), ...defaultOutputConfig() },
    syscall: { snaplen: DEFAULT_SNAPLEN, optional: false, bufSizePreset: DEFAULT_BUF_SIZE_PRESET, filterOpens: true },
    resources: { dir: '', apiGroup: 'deckhouse.io', maxFiles: 256, maxFileBytes: 1024 * 1024, watchApi: false, kubeconfig: '', apiSyncTimeoutSeconds: 10, moduleConfigStatus: true },
    module: { controlPlaneManager: false, auditWebhookConfigFile: '' },
    containers: {
      enabled: true,
      callTimeoutMs: DEFAULT_RUNTIMES.callTimeoutMs,
      cri: { enabled: true, sockets: [...DEFAULT_RUNTIMES.cri] },
      docker: { enabled: true, sockets: [...DEFAULT_RUNTIMES.docker] },
      podman: { enabled: true, sockets: [...DEFAULT_RUNTIMES.podman] },
    },
    dns: { enabled: true, ...DNS_DEFAULTS, servers: [...DNS_DEFAULTS.servers] },
    api: defaultApiConfig(),
    errorTracking: { dsn: '' },
    console: { enabled: true, address: '127.0.0.1', port: 2802 },
  };
}

export type { ConfigProblem } from './problem.js';

/** Root keys that exist although their default is unset. */
const OPTIONAL_ROOT_KEYS = ['hostname'];

function mergeInto(target: Record<string, unknown>, src: unknown, path: string, problems: ConfigProblem[]): void {
  if (src === null || src === undefined) return;
  if (typeof src !== 'object' || Array.isArray(src)) {
    problems.push({ key: path || '(root)', message: 'expected a mapping' });
    return;
  }
  for (const [k, v] of Object.entries(src as Record<string, unknown>)) {
    const key = path ? `${path}.${k}` : k;
    if (!(k in target)) {
      problems.push({ key, message: 'unknown key' });
      continue;
    }
    const cur = target[k];
    if (cur !== null && typeof cur === 'object' && !Array.isArray(cur) && Object.keys(cur).length === 0) {
      target[k] = v ?? cur; // a free-form mapping (its default is {}), checked by its consumer
    } else if (cur !== null && typeof cur === 'object' && !Array.isArray(cur)) {
      mergeInto(cur as Record<string, unknown>, v, key, problems);
    } else if (cur === undefined || typeof v === typeof cur || (Array.isArray(cur) && Array.isArray(v))) {
      target[k] = v;
    } else {
      problems.push({ key, message: `expected ${Array.isArray(cur) ? 'a list' : `a ${typeof cur}`}` });
    }
  }
}

/** Defaults overlaid with a YAML text; problems are returned, never thrown. A file of Falco's shape (falco.yaml) is translated first, with a located note for each key not applied. */
export function configFromYaml(text: string, env: NodeJS.ProcessEnv = process.env, file = '(config)'): { config: Config; problems: ConfigProblem[]; notes: string[] } {
  const config = defaultConfig(env);
  const problems: ConfigProblem[] = [];
  const notes: string[] = [];
  const lines = new LineCounter();
  let doc: unknown;
  const document = parseDocument(text, { lineCounter: lines });
  if (document.errors.length > 0) {
    problems.push({ key: '(file)', message: document.errors[0]!.message });
    return { config, problems, notes };
  }
  doc = document.toJS();
  if (isFalcoShape(doc)) {
    const falco = translateFalco(document, lines, file);
    notes.push(...falco.notes);
    problems.push(...falco.problems);
    doc = falco.overlay;
  }
  const target = config as unknown as Record<string, unknown>;
  if (!('hostname' in target)) target.hostname = undefined;
  mergeInto(target, doc, '', problems);
  return { config, problems, notes };
}

/** Applies RAE_<SECTION>_<KEY> environment variables; variables naming no key are left alone (RAE_STATE_DIR is read by the defaults). */
function applyEnvOverrides(config: Config, env: NodeJS.ProcessEnv = process.env): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const shape = defaultConfig(env) as unknown as Record<string, unknown>;
  const sections = Object.entries(config).filter(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v)) as [string, Record<string, unknown>][];
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith('RAE_') || text === undefined) continue;
    for (const [section, keys] of sections) {
      const prefix = `RAE_${section.toUpperCase()}_`;
      if (!name.startsWith(prefix)) continue;
      const wanted = name.slice(prefix.length).replaceAll('_', '').toLowerCase();
      const key = Object.keys(keys).find((k) => k.toLowerCase() === wanted);
      if (!key) continue;
      const p = setKey(config as unknown as Record<string, unknown>, `${section}.${key}`, text, { shape, optionalRootKeys: OPTIONAL_ROOT_KEYS });
      if (p) problems.push({ key: `${p.key} (environment ${name})`, message: p.message });
    }
  }
  return problems;
}

/** Applies `-o key=value` options in order (host/config/option.ts: Falco's key paths; a list key given again appends). */
function applyOverrides(config: Config, overrides: readonly string[], env: NodeJS.ProcessEnv): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const shape = defaultConfig(env) as unknown as Record<string, unknown>;
  const seen = new Set<string>();
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) {
      problems.push({ key: o, message: 'expected -o key=value (a dotted key, e.g. -o forwarder.port=2802)' });
      continue;
    }
    const key = o.slice(0, eq).trim();
    const p = setKey(config as unknown as Record<string, unknown>, key, o.slice(eq + 1), { shape, append: seen.has(key), optionalRootKeys: OPTIONAL_ROOT_KEYS });
    seen.add(key);
    if (p) problems.push({ key: `${p.key} (-o)`, message: p.message });
  }
  return problems;
}

/** The rule-load bounds whose values are capped: the parser and the regex engine run recursively, so their depth has a ceiling the JS stack holds. */
const RULES_LIMIT_CEILINGS = {
  maxConditionDepth: HARD_MAX_DEPTH,
  maxRegexRepeat: REGEX_HARD_LIMITS.maxRepeat,
  maxRegexAtoms: REGEX_HARD_LIMITS.maxSize,
  maxRegexNesting: REGEX_HARD_LIMITS.maxDepth,
  maxGlobBytes: Number.MAX_SAFE_INTEGER,
  maxOutputBytes: Number.MAX_SAFE_INTEGER,
  maxOutputFieldBytes: Number.MAX_SAFE_INTEGER,
} as const;

/** Each bounded rules.* key is a whole number from 1 to its ceiling; webhook.decoder bytes or objects; syscall.snaplen one from 0 to MAX_DATA, syscall.bufSizePreset from 1 to 10. */
function checkRulesLimits(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const snaplen = config.syscall.snaplen;
  if (!Number.isInteger(snaplen) || snaplen < 0 || snaplen > MAX_DATA) problems.push({ key: 'syscall.snaplen', message: `expected a whole number from 0 to ${MAX_DATA}, got ${snaplen}` });
  const decoder = config.webhook.decoder;
  if (decoder !== 'bytes' && decoder !== 'objects') problems.push({ key: 'webhook.decoder', message: `expected bytes or objects, got ${decoder}` });
  const preset = config.syscall.bufSizePreset;
  if (!Number.isInteger(preset) || preset < 1 || preset > MAX_BUF_SIZE_PRESET) problems.push({ key: 'syscall.bufSizePreset', message: `expected a whole number from 1 to ${MAX_BUF_SIZE_PRESET}, got ${preset}` });
  for (const [name, ceiling] of Object.entries(RULES_LIMIT_CEILINGS) as [keyof typeof RULES_LIMIT_CEILINGS, number][]) {
    const v = config.rules[name];
    if (!Number.isInteger(v) || v < 1 || v > ceiling) problems.push({ key: `rules.${name}`, message: `expected a whole number from 1 to ${ceiling}, got ${v}` });
  }
  return problems;
}

/** Loads `--config FILE` (or the defaults when no file is given), then the environment and `-o` overrides; notes are the located lines of a Falco file's keys not applied. */
export function loadConfig(file: string | undefined, stateDirOverride?: string, overrides: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): { config: Config; problems: ConfigProblem[]; notes: string[] } {
  const result = loadConfigFile(file, env);
  if (result.problems.length === 0) result.problems.push(...applyEnvOverrides(result.config, env), ...applyOverrides(result.config, overrides, env));
  if (result.problems.length === 0) result.problems.push(...checkRulesLimits(result.config), ...checkDnsConfig(result.config.dns));
  // the destinations (falcosidekick's settings and variables) checked on the final values
  if (result.problems.length === 0) result.problems.push(...resolveOutputs(result.config.forwarder, env).problems, ...resolveAggregation(result.config.forwarder.aggregation).problems);
  if (stateDirOverride) result.config.stateDir = stateDirOverride;
  return result;
}

function loadConfigFile(file: string | undefined, env: NodeJS.ProcessEnv): { config: Config; problems: ConfigProblem[]; notes: string[] } {
  if (file === undefined) return { config: defaultConfig(env), problems: [], notes: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { config: defaultConfig(env), problems: [{ key: '(file)', message: `cannot read ${file}: ${(err as Error).message}` }], notes: [] };
  }
  return configFromYaml(text, env, file);
}
