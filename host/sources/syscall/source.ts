// The live kernel source of `rae run`: attaches the probe, tells it which syscalls the running
// ruleset needs, hands the /proc snapshot to the engine as PROC records, then on every wake drains
// the ring into one reusable buffer and hands it whole to engine.evaluateKernel (the byte path:
// ingest.ts and probes/addon/ingest.c write eval records, no JS object per event). A field the
// byte path does not provide reads as missing; each ruleset's such fields are logged, rule by
// rule, when it becomes the running one (missingFields, fields.ts). Never blocks the kernel:
// the ring is the bounded backlog; when it is more than 3/4 full the source sheds evaluation
// (state is still applied) and counts those events as queue_full. Kernel-side lost records and
// userspace drops are counted in metrics and reported as one internal alert per interval.
import type { Metrics } from '../../metrics/index.js';
import { internalAlert } from '../../output/alert.js';
import type { Alert } from '../../output/alert.js';
import type { LoadResult } from '../../engine/index.js';
import type { KernelUnready } from '../../runtime/index.js';
import { dataSyscalls, missingFields, type MissingField } from './fields.js';
import { HDR, KIND, MAX_RECORD, SIZES } from '../../abi/records.js';
import { clocks, DEFAULT_SNAPLEN, openCapture, probeSupport, type Capture, type CaptureOptions, type SupportCode } from './addon.js';
import { encodeProcRecord, readProcesses } from './procfs.js';
import { syscallIds, syscallName } from './syscalls.js';
import { openPathFilter, PATH_FILTERED } from './open-filter.js';

/** The internal alert's rule name for dropped kernel events. */
const SYSCALL_DROP_RULE = 'Engine internal: syscall event drop';
/** Syscalls the state needs whatever the rules say (socket types for fd.l4proto). */
const STATE_SYSCALLS = ['socket'];
/** Records drained per batch at most (about 20,000 syscall records; the batch region holds more). */
const BUFFER_BYTES = 4 << 20;
/**
 * Wake the consumer at 2 MiB queued (a quarter of a smaller ring) or after 20 ms: a few dozen
 * batches per second at any rate, alerts well under a second late.
 */
const CAPTURE_DEFAULTS = { wakeupBytes: 2 << 20, maxLatencyMs: 20 } as const;
/** pids are below 2^22 (PID_MAX_LIMIT on 64-bit). */
const PID_MASK = (1 << 22) - 1;
/** Longest stretch of draining before yielding to the event loop, ms. */
const SLICE_MS = 8;

/** What the source needs from the detection engine. */
interface EngineLike {
  /** The evaluator's byte path: wire records straight into its memory (DetectionEngine.evaluateKernel); the alert count, or why nothing was judged. */
  evaluateKernel(view: Uint8Array, bytes: number, bootToEpochNs?: bigint): number | KernelUnready;
  readonly ruleset: LoadResult | undefined;
  readonly rulesetGeneration: number;
}

/** Options of startSyscallSource(). */
export interface SyscallSourceOptions {
  engine: EngineLike;
  metrics?: Pick<Metrics, 'eventsReceived' | 'eventsEvaluated' | 'eventsDropped' | 'evaluationTime'>;
  log: (message: string) => void;
  /** Where the internal drop alert goes (the forwarder). */
  submit: (alert: Alert) => void;
  hostname: string;
  capture?: CaptureOptions;
  /** At most one drop alert per this many ms (default 10 000). */
  dropAlertIntervalMs?: number;
}

/** A running kernel source. */
export interface SyscallSource {
  /** Counters since start. */
  stats(): { records: number; events: number; lost: number; shed: number };
  stop(): Promise<void>;
}

/** The capture's options: the defaults, a wake-up at a quarter of a ring smaller than 8 MiB, then what the caller set. */
function captureOptions(given: CaptureOptions | undefined): CaptureOptions {
  const ring = given?.ringBufferBytes;
  return { ...CAPTURE_DEFAULTS, ...(ring ? { wakeupBytes: Math.min(CAPTURE_DEFAULTS.wakeupBytes, ring / 4) } : {}), ...given };
}

/** The syscalls the probe records for `rules`: those their enabled syscall rules name (evt.type), and those the state needs. */
export function ruleSyscalls(rules: LoadResult['ruleset']['rules']): Set<string> {
  const names = new Set(STATE_SYSCALLS);
  for (const r of rules) if (r.source === 'syscall' && r.enabled) for (const t of r.evttypes ?? []) names.add(t);
  return names;
}

/**
 * Tells the probe what `rules` need: the syscalls they name and the state needs, the I/O buffers
 * of those a rule reading evt.buffer/evt.arg.data can match, and (unless not `filterOpens`) which
 * read-only opens can be left in the kernel (open-filter.ts); logs what it set.
 */
function tellProbe(cap: Capture, rules: LoadResult['ruleset']['rules'], snaplen: number, filterOpens: boolean, log: (message: string) => void): void {
  const { ids } = syscallIds(ruleSyscalls(rules));
  // I/O buffers only of the syscalls a rule reading evt.buffer/evt.arg.data can match; none when no rule reads them
  const dataIds = syscallIds(dataSyscalls(rules)).ids;
  // read-only opens only of the paths a rule can match, when every rule says which (open-filter.ts)
  const opens = syscallIds(PATH_FILTERED).ids.filter((id) => ids.includes(id));
  const paths = !filterOpens || opens.length === 0 ? undefined : openPathFilter(rules);
  const openPaths = paths && { syscalls: opens, ...paths };
  let filtered = '';
  try {
    cap.setInterestingSyscalls(ids, dataIds, openPaths);
    if (paths) filtered = `; read-only opens only of ${paths.exact.length} paths and ${paths.prefixes.length} prefixes${paths.names.length > 0 ? ` or by ${paths.names.length} process names` : ''} the rules can match`;
  } catch (err) {
    log(`syscall: ${(err as Error).message}`);
  }
  const data = dataIds.length > 0 ? `; their I/O buffers (snaplen ${snaplen} bytes) for ${dataIds.map(syscallName).join(' ')}` : '';
  log(`syscall: capturing ${ids.length} syscalls the rules need (${ids.map(syscallName).join(' ')})${data}${filtered}`);
}

/**
 * Hands the /proc snapshot to the engine as PROC records (through `judge`, batches of `buf`), and
 * the names its table takes from them to the probe, for its test of a rule's process names
 * (probe.bpf.c proc_names; without them a process from before the start keeps every open).
 */
function bootstrap(cap: Capture, buf: Uint8Array, bootNs: bigint, judge: (view: Uint8Array, bytes: number) => boolean, log: (message: string) => void): void {
  let fill = 0;
  const pids: number[] = [];
  const comms: Buffer[] = [];
  for (const p of readProcesses()) {
    if (fill + MAX_RECORD > buf.length) {
      judge(buf, fill);
      fill = 0;
    }
    const n = encodeProcRecord(p, buf, fill, bootNs);
    fill += Math.max(0, n);
    if (n > 0) {
      pids.push(p.pid);
      comms.push(p.comm);
    }
  }
  if (fill > 0) judge(buf, fill);
  try {
    cap.setProcessNames(pids, comms);
  } catch (err) {
    log(`syscall: ${(err as Error).message}`);
  }
}

/** Attaches the probe and starts evaluating kernel events; throws a CaptureError when it cannot. */
export function startSyscallSource(opts: SyscallSourceOptions): SyscallSource {
  const cap: Capture = openCapture(captureOptions(opts.capture));
  const snaplen = opts.capture?.snaplen ?? DEFAULT_SNAPLEN;
  const buf = new Uint8Array(BUFFER_BYTES);
  const dv = new DataView(buf.buffer);
  const meta = new Uint32Array(1);
  const c = clocks();
  const toEpoch = c.realtimeNs - c.boottimeNs;
  let generation = -1;
  let records = 0;
  let evaluated = 0;
  let shed = 0;
  let lostSeen = 0;
  let pendingLost = 0;
  let pendingShed = 0;
  let lastAlert = 0;
  let stopped = false;
  let scheduled = false;
  const cutter = new ExecCutter();
  /** Why the engine judged nothing in the last batch (no compiled ruleset yet...), logged once per change. */
  let unready: KernelUnready | undefined;
  /** Hands view[0..bytes) to the engine; false when it judged nothing (its state says why). */
  const judgeBytes = (view: Uint8Array, bytes: number): boolean => {
    const r = opts.engine.evaluateKernel(view, bytes, toEpoch);
    if (typeof r === 'number') return true;
    if (r !== unready) opts.log(`syscall: kernel events are not judged (${r}): counted as dropped (no_ruleset) until the engine can judge them`);
    unready = r;
    return false;
  };

  const setInteresting = () => {
    const gen = opts.engine.rulesetGeneration;
    if (gen === generation) return;
    generation = gen;
    for (const line of missingFieldWarnings(missingFields(opts.engine.ruleset?.ruleset.rules ?? []))) opts.log(line);
    tellProbe(cap, opts.engine.ruleset?.ruleset.rules ?? [], snaplen, opts.capture?.filterOpens !== false, opts.log);
  };

  // Bootstrap after attaching, so a process started meanwhile is seen by the snapshot or the probe.
  bootstrap(cap, buf, c.boottimeNs, judgeBytes, opts.log);
  setInteresting();

  /** The byte path: the batch as it is, or only its process records while shedding (cut around execs: ExecCutter). */
  const batchBytes = (bytes: number, shedding: boolean) => {
    const b = cutter.scan(buf, dv, bytes, shedding);
    if (b.bad) {
      opts.metrics?.eventsDropped('syscall', 'decode_error', 1);
      pendingShed++;
    }
    records += b.n;
    opts.metrics?.eventsReceived('syscall', b.n);
    if (shedding) {
      shed += b.syscalls;
      pendingShed += b.syscalls;
      if (b.syscalls > 0) opts.metrics?.eventsDropped('syscall', 'queue_full', b.syscalls);
    }
    const start = process.hrtime.bigint();
    try {
      let judgedAll = true;
      if (shedding) judgedAll = judgeBytes(buf, b.keep);
      const cuts = b.cuts;
      for (let i = 0; !shedding && judgedAll && i + 1 < cuts.length; i++) judgedAll = judgeBytes(cuts[i] === 0 ? buf : buf.subarray(cuts[i]!), cuts[i + 1]! - cuts[i]!);
      if (!judgedAll && !shedding) opts.metrics?.eventsDropped('syscall', 'no_ruleset', b.syscalls);
      else if (!shedding) {
        evaluated += b.syscalls;
        opts.metrics?.eventsEvaluated('syscall', b.syscalls);
      }
    } catch (err) {
      opts.metrics?.eventsDropped('syscall', 'trap', b.syscalls);
      opts.log(`syscall: evaluation of ${b.syscalls} events failed: ${(err as Error)?.message ?? String(err)}`);
    }
    opts.metrics?.evaluationTime('syscall', Number(process.hrtime.bigint() - start) / 1e9);
  };

  // One batch per wakeup: poll until the ring is empty (which re-arms the watcher) or the buffer
  // is full, then evaluate everything at once (per-batch costs, such as arming the watchdog, are
  // paid once per thousands of records instead of once per poll).
  const drain = () => {
    scheduled = false;
    if (stopped) return;
    setInteresting();
    const until = performance.now() + SLICE_MS;
    for (;;) {
      const st = cap.stats();
      const shedding = st.queuedBytes > st.ringBytes * 0.75;
      let fill = 0;
      let got = 1;
      while (buf.length - fill >= MAX_RECORD && (got = cap.poll(fill === 0 ? buf : buf.subarray(fill), meta)) > 0) fill += got;
      if (fill > 0) batchBytes(fill, shedding);
      if (got === 0) return; // the ring was empty: the watcher is re-armed
      if (performance.now() > until) break;
    }
    scheduled = true;
    setImmediate(drain);
  };

  const checkDrops = () => {
    const lost = cap.stats().lost;
    if (lost > lostSeen) {
      opts.metrics?.eventsDropped('syscall', 'kernel_lost', lost - lostSeen);
      pendingLost += lost - lostSeen;
      lostSeen = lost;
    }
    const now = Date.now();
    if ((pendingLost > 0 || pendingShed > 0) && now - lastAlert >= (opts.dropAlertIntervalMs ?? 10_000)) {
      lastAlert = now;
      opts.submit(dropAlert(pendingLost, pendingShed, opts.hostname));
      opts.log(`syscall: ${pendingLost} kernel event(s) lost (ring buffer full), ${pendingShed} dropped in userspace`);
      pendingLost = 0;
      pendingShed = 0;
    }
  };
  const timer = setInterval(() => {
    setInteresting();
    checkDrops();
  }, 1000);
  timer.unref();

  cap.watch(() => {
    if (!scheduled) drain();
  });
  drain();

  return {
    stats: () => ({ records, events: evaluated, lost: cap.stats().lost, shed }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      checkDrops();
      cap.close();
    },
  };
}

/** One drained batch as ExecCutter.scan read it. */
interface ScannedBatch {
  /** Records, and syscall records among them, up to the first bad one. */
  n: number;
  syscalls: number;
  /** Offsets of the pieces the engine judges in turn, then the end of the good bytes. */
  cuts: number[];
  /** While shedding: the bytes of the process records, moved to the front of the buffer. */
  keep: number;
  /** A record with a bad length ended the batch (the rest is dropped). */
  bad: boolean;
}

/**
 * Cuts a batch before an EXEC (or capset's CAPS) of a process that has syscall events earlier in
 * the same piece: the engine judges a piece after applying all its process records, and both
 * rewrite the process's entry. While shedding, keeps only the process records (state is still
 * applied), moved to the front of the buffer.
 */
class ExecCutter {
  /** The piece of the batch each pid last had a syscall event in. */
  private pieceOf: Uint16Array | undefined;
  private piece = 0;

  scan(buf: Uint8Array, dv: DataView, bytes: number, shedding: boolean): ScannedBatch {
    const pieceOf = (this.pieceOf ??= new Uint16Array(PID_MASK + 1));
    const out: ScannedBatch = { n: 0, syscalls: 0, cuts: [0], keep: 0, bad: false };
    this.next();
    for (let off = 0; off + SIZES.hdr <= bytes; ) {
      const len = dv.getUint32(off + HDR.len, true);
      if (len < SIZES.hdr || len % 8 !== 0 || off + len > bytes) {
        out.bad = true;
        bytes = off;
        break;
      }
      const kind = dv.getUint16(off + HDR.kind, true);
      const isSyscall = kind === KIND.SYSCALL;
      out.n++;
      if (isSyscall) out.syscalls++;
      if (!shedding && (isSyscall || kind === KIND.EXEC || kind === KIND.CAPS)) {
        const pid = dv.getUint32(off + HDR.pid, true) & PID_MASK;
        if (isSyscall) pieceOf[pid] = this.piece;
        else if (pieceOf[pid] === this.piece) {
          out.cuts.push(off);
          this.next();
        }
      }
      if (shedding && !isSyscall) {
        if (out.keep !== off) buf.copyWithin(out.keep, off, off + len);
        out.keep += len;
      }
      off += len;
    }
    out.cuts.push(bytes);
    return out;
  }

  private next(): void {
    if (++this.piece > 0xffff) this.piece = 1;
  }
}

/** Rules named per missing field in a warning, at most. */
const WARN_RULES = 5;

/** One warning line per field the rules use that kernel events lack, naming the rules that use it (how, and the first few). */
export function missingFieldWarnings(missing: readonly MissingField[]): string[] {
  const byField = new Map<string, MissingField[]>();
  for (const m of missing) byField.set(m.field, [...(byField.get(m.field) ?? []), m]);
  return [...byField].map(([field, uses]) => {
    const named = uses
      .slice(0, WARN_RULES)
      .map((u) => `"${u.rule}" (${u.where})`)
      .join(', ');
    const more = uses.length > WARN_RULES ? ` and ${uses.length - WARN_RULES} more` : '';
    return `syscall: warning: kernel events do not provide ${field}, it reads as missing in rule ${named}${more}`;
  });
}

/** The internal alert for dropped kernel events (like Falco's syscall event drop alert). */
function dropAlert(lost: number, shed: number, hostname: string, now: bigint = BigInt(Date.now()) * 1_000_000n): Alert {
  return internalAlert(
    SYSCALL_DROP_RULE,
    'Warning',
    ['syscall', 'drops'],
    hostname,
    `${lost + shed} syscall event(s) dropped since the last report (${lost} lost in the kernel ring buffer, ${shed} shed in userspace)`,
    { n_drops: lost + shed, n_drops_kernel: lost, n_drops_userspace: shed },
    now,
  );
}

/** The kernel source as a module source for `rae run`, or undefined after logging (and telling `onOff`) why it cannot run here. */
export function syscallModuleSource(opts: SyscallSourceOptions, onOff?: (code: SupportCode, reason: string) => void): { name: 'syscall'; start(): Promise<{ stop(): Promise<void> }> } | undefined {
  const support = probeSupport();
  if (!support.available) {
    opts.log(`run: kernel (syscall) source off: ${support.code}: ${support.reason}; the other sources keep running`);
    onOff?.(support.code, support.reason);
    return undefined;
  }
  return {
    name: 'syscall',
    start: async () => {
      const src = startSyscallSource(opts);
      return { stop: () => src.stop() };
    },
  };
}
