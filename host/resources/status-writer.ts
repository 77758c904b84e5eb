// Status of the module's objects (EngineAuditRules, NamespacedEngineAuditRules, the ModuleConfig),
// written by one engine at a time. Every engine publishes
// its node report (status.ts: which generation of each object it runs, or why not) in a Lease of
// its own, `runtime-audit-engine-node-<node>` (label runtime-audit-engine.deckhouse.io/report=node,
// the report as JSON in an annotation), renewed every period; a node that stops renewing drops out
// of the counts once its lease duration has passed. The engines contend for the Lease
// `runtime-audit-engine-status` as client-go's leader election does (the holder renews it; another
// takes it over only once it has seen the same record unchanged for a lease duration, by its own
// clock, so clocks need not agree); the holder reads the node reports and writes each object's
// status through the status subresource, only when it says something new. Writes use the
// resourceVersion read: a conflict (another writer, a newer object) is left to the next round.
// Consumes node reports and the objects as watched; produces Lease and status writes.
import type { ApiObject } from './list-watch.js';
import { type NodeReport, objectStatus, type RulesStatus, sameStatus } from './status.js';

/** A Lease (coordination.k8s.io/v1) as this module reads and writes it. */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

/** The API calls the writer makes (kube-api.ts over @kubernetes/client-node). Errors carry the HTTP status as `code`. */
export interface StatusApi {
  getLease(namespace: string, name: string): Promise<Lease | undefined>;
  createLease(namespace: string, lease: Lease): Promise<unknown>;
  replaceLease(namespace: string, lease: Lease): Promise<unknown>;
  listLeases(namespace: string, labelSelector: string): Promise<Lease[]>;
  /** Replaces the status of an object, by its kind (its metadata.resourceVersion guards the write). */
  replaceStatus(object: ApiObject): Promise<unknown>;
}

export interface StatusWriterOptions {
  api: StatusApi;
  /** Where the Leases are (the engine's namespace). */
  namespace: string;
  /** This engine's node name (the holder identity). */
  node: string;
  /** The objects that get a status, as watched now. */
  objects(): ApiObject[];
  log(message: string): void;
  /** A round every periodMs (default 10 000). */
  periodMs?: number;
  /** Lease duration, s (default 40): a node report or a writer silent that long is gone. */
  leaseDurationSeconds?: number;
}

/** The Lease of the status writer. */
export const WRITER_LEASE = 'runtime-audit-engine-status';
/** Label and annotation of the node reports. */
const REPORT_LABEL = 'runtime-audit-engine.deckhouse.io/report';
const REPORT_ANNOTATION = 'runtime-audit-engine.deckhouse.io/rules';

/** A metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const codeOf = (err: unknown) => (err as { code?: number; statusCode?: number }).code ?? (err as { statusCode?: number }).statusCode;

/** Publishes this node's report and, while it holds the writer Lease, the objects' status. */
export class StatusWriter {
  private report: NodeReport = {};
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private leading = false;
  /** The writer Lease's record as last seen, and when (this clock). */
  private seen: { record: string; at: number } | undefined;
  private readonly periodMs: number;
  private readonly duration: number;

  constructor(private readonly opts: StatusWriterOptions) {
    this.periodMs = opts.periodMs ?? 10_000;
    this.duration = opts.leaseDurationSeconds ?? 40;
  }

  /** True while this engine holds the writer Lease. */
  get isWriter(): boolean {
    return this.leading;
  }

  /** Starts the rounds. */
  start(): void {
    this.timer = setInterval(() => this.kick(), this.periodMs);
    this.timer.unref();
    this.kick();
  }

  /** This node's outcomes after a snapshot: published at once. */
  setReport(report: NodeReport): void {
    this.report = report;
    this.kick();
  }

  /** Resolves once no round is running or pending. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((err: Error) => this.opts.log(`resources: status round failed: ${err.message}; again in ${this.periodMs / 1000} s`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async round(): Promise<void> {
    await this.publish();
    const leading = await this.lead();
    if (leading !== this.leading)
      this.opts.log(leading ? `resources: ${this.opts.node} writes the status of the module's objects (Lease ${this.opts.namespace}/${WRITER_LEASE})` : `resources: ${this.opts.node} no longer writes the status of the module's objects`);
    this.leading = leading;
    if (leading && !this.stopped) await this.writeStatuses();
  }

  /** Creates or renews this node's report Lease. */
  private async publish(): Promise<void> {
    const { api, namespace, node } = this.opts;
    // A Lease name is a DNS-1123 subdomain (node names are; a laptop's host name may not be).
    const name = `runtime-audit-engine-node-${node.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`.slice(0, 253).replace(/[^a-z0-9]+$/, '');
    const existing = await api.getLease(namespace, name);
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace, labels: { [REPORT_LABEL]: 'node' }, annotations: { [REPORT_ANNOTATION]: JSON.stringify(this.report) }, resourceVersion: existing?.metadata.resourceVersion },
      spec: { holderIdentity: node, leaseDurationSeconds: this.duration, renewTime: microTime(new Date()) },
    };
    await this.conflictTolerant(() => (existing ? api.replaceLease(namespace, lease) : api.createLease(namespace, lease)));
  }

  /** Takes or renews the writer Lease; true while held. */
  private async lead(): Promise<boolean> {
    const { api, namespace, node } = this.opts;
    const now = new Date();
    const current = await api.getLease(namespace, WRITER_LEASE);
    const spec = current?.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}/${spec.renewTime ?? ''}`;
    if (this.seen?.record !== record) this.seen = { record, at: now.getTime() };
    const expired = now.getTime() > this.seen.at + (spec.leaseDurationSeconds ?? this.duration) * 1000;
    if (current && spec.holderIdentity && spec.holderIdentity !== node && !expired) return false;
    const taking = spec.holderIdentity !== node;
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: WRITER_LEASE, namespace, resourceVersion: current?.metadata.resourceVersion },
      spec: {
        holderIdentity: node,
        leaseDurationSeconds: this.duration,
        renewTime: microTime(now),
        acquireTime: taking ? microTime(now) : spec.acquireTime,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (taking && current ? 1 : 0),
      },
    };
    return this.conflictTolerant(() => (current ? api.replaceLease(namespace, lease) : api.createLease(namespace, lease)));
  }

  /** The node reports renewed within their lease duration (by the node's renewTime). */
  private async reports(): Promise<NodeReport[]> {
    const leases = await this.opts.api.listLeases(this.opts.namespace, `${REPORT_LABEL}=node`);
    const now = Date.now();
    const out: NodeReport[] = [];
    for (const l of leases) {
      const renewed = Date.parse(l.spec?.renewTime ?? '');
      if (!(renewed + (l.spec?.leaseDurationSeconds ?? this.duration) * 1000 >= now)) continue;
      try {
        out.push(JSON.parse(l.metadata.annotations?.[REPORT_ANNOTATION] ?? '{}') as NodeReport);
      } catch {
        this.opts.log(`resources: the node report in Lease ${l.metadata.name} is not JSON; not counted`);
      }
    }
    return out;
  }

  private async writeStatuses(): Promise<void> {
    const reports = await this.reports();
    const now = new Date();
    for (const o of this.opts.objects()) {
      const previous = o.status as Partial<RulesStatus> | undefined;
      const status = objectStatus(o, reports, now, previous);
      if (sameStatus(previous, status)) continue;
      await this.conflictTolerant(() => this.opts.api.replaceStatus({ ...o, status }));
    }
  }

  /** Runs a write; a 409 (someone else wrote first) or 404 (gone meanwhile) is false, for the next round. */
  private async conflictTolerant(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      const code = codeOf(err);
      if (code === 409 || code === 404) return false;
      throw err;
    }
  }
}
