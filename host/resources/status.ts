// What `kubectl get engineauditrules` (and `namespacedengineauditrules`, `moduleconfigs`) shows.
// Two steps:
//   - nodeReport: on each node, after each snapshot, whether every object of the cluster
//     (EngineAuditRules, NamespacedEngineAuditRules, the ModuleConfig) was accepted there, at which
//     generation, and if not the first located diagnostics (`file:line:col: message`, the file
//     being the object's `cluster/<plural>/[<namespace>/]<name>.yaml`);
//   - objectStatus: the status one writer (status-writer.ts) puts on an object from the reports of
//     the nodes alive: a `Ready` condition (True: every node runs this generation; False: a node
//     rejected it, with the first diagnostic; Unknown: nodes still on an older one), the
//     generation it speaks of, how many nodes run it, and the diagnostics.
// Consumes controller outcomes and node reports; produces plain status objects.
import type { ApplyResult } from './controller.js';
import type { ApiObject } from './list-watch.js';
import { headline } from './report.js';

/** One object's outcome on one node. */
interface RulesOutcome {
  generation: number;
  loaded: boolean;
  /** Why not (`Invalid`, `NotCompiled`), the first diagnostics; empty when loaded. */
  reason?: string;
  diagnostics?: string[];
}

/** A node's outcomes, by reportKey. */
export type NodeReport = Record<string, RulesOutcome>;

/** The kinds whose objects get a status. */
const STATUS_KINDS = new Set(['EngineAuditRules', 'NamespacedEngineAuditRules', 'ModuleConfig']);

/**
 * An object's key in a node report and the name the controller's rejections give it: an
 * EngineAuditRules object by its name alone, the others `<kind>/[<namespace>/]<name>`.
 */
function reportKey(o: ApiObject): string {
  const name = controllerName(o);
  return o.kind === 'EngineAuditRules' ? name : `${o.kind}/${name}`;
}

/** The resource name the controller uses (manifests.ts: a namespaced kind's is `<namespace>/<name>`). */
function controllerName(o: ApiObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** The diagnostics kept per object (the status is for reading, the node's stderr has them all). */
const MAX_DIAGNOSTICS = 5;

/** The outcome of every object of a snapshot that gets a status (`objects` by the path it was rendered at). */
export function nodeReport(objects: ReadonlyMap<string, ApiObject>, result: Pick<ApplyResult, 'rejections'>): NodeReport {
  const out: NodeReport = {};
  for (const [path, o] of objects) {
    if (!o.kind || !STATUS_KINDS.has(o.kind)) continue;
    const name = controllerName(o);
    const rejected = result.rejections.filter((r) => r.kind === o.kind && r.name === name && r.where.startsWith(`${path}:`));
    const generation = o.metadata.generation ?? 0;
    if (rejected.length === 0) {
      out[reportKey(o)] = { generation, loaded: true };
      continue;
    }
    const diagnostics = rejected.flatMap((r) => r.errors.map(headline)).slice(0, MAX_DIAGNOSTICS);
    out[reportKey(o)] = { generation, loaded: false, reason: rejected.some((r) => r.reason === 'compile') ? 'NotCompiled' : 'Invalid', diagnostics };
  }
  return out;
}

/** True for the objects that get a status. */
export function hasStatus(o: ApiObject): boolean {
  return o.kind !== undefined && STATUS_KINDS.has(o.kind);
}

/** A status condition (metav1.Condition). */
interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

/** The status of an EngineAuditRules, NamespacedEngineAuditRules or ModuleConfig object. */
export interface RulesStatus {
  observedGeneration: number;
  /** Nodes whose engine reports. */
  nodes: number;
  /** Of those, the nodes running this generation. */
  readyNodes: number;
  diagnostics: string[];
  conditions: Condition[];
}

/**
 * The status of `o` from the reports of the live nodes; `previous` keeps the condition's
 * lastTransitionTime while its status stays the same.
 */
export function objectStatus(o: ApiObject, reports: readonly NodeReport[], now: Date, previous?: Partial<RulesStatus>): RulesStatus {
  const generation = o.metadata.generation ?? 0;
  let ready = 0;
  let rejected = 0;
  let first: RulesOutcome | undefined;
  for (const r of reports) {
    const x = r[reportKey(o)];
    if (x?.generation !== generation) continue;
    if (x.loaded) ready++;
    else {
      rejected++;
      first ??= x;
    }
  }
  const nodes = reports.length;
  const of = `${nodes} node${nodes === 1 ? '' : 's'}`;
  // A rejected ModuleConfig leaves the settings in force, a rejected rules object the rules.
  const stay = o.kind === 'ModuleConfig' ? 'whose module settings stay' : 'whose running rules stay';
  const condition: Omit<Condition, 'lastTransitionTime'> =
    rejected > 0
      ? { type: 'Ready', status: 'False', reason: first!.reason ?? 'Invalid', message: `rejected on ${rejected} of ${of}, ${stay}: ${first!.diagnostics?.[0] ?? 'invalid'}`, observedGeneration: generation }
      : nodes > 0 && ready === nodes
        ? { type: 'Ready', status: 'True', reason: 'Loaded', message: `loaded on ${ready} of ${of}`, observedGeneration: generation }
        : { type: 'Ready', status: 'Unknown', reason: nodes === 0 ? 'NoNodes' : 'Pending', message: nodes === 0 ? 'no engine reports' : `loaded on ${ready} of ${of}; waiting for the others`, observedGeneration: generation };
  const before = previous?.conditions?.find((c) => c.type === 'Ready');
  const lastTransitionTime = before && before.status === condition.status ? before.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z');
  return { observedGeneration: generation, nodes, readyNodes: ready, diagnostics: first?.diagnostics ?? [], conditions: [{ ...condition, lastTransitionTime }] };
}

/** JSON with object keys sorted (the API server re-encodes what it stores in its own key order). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** True when two statuses say the same (the transition time aside). */
export function sameStatus(a: Partial<RulesStatus> | undefined, b: RulesStatus): boolean {
  const strip = (s: Partial<RulesStatus> | undefined) => canonical({ ...s, conditions: s?.conditions?.map(({ lastTransitionTime: _t, ...c }) => c) });
  return strip(a) === strip(b);
}
