// Loads the capture addon (probes/build/Release/rae_probe.node) and says whether the kernel probe
// can run here. Consumes the platform, the addon binary, /sys/kernel/btf/vmlinux, the process's
// effective capabilities and the kernel's BTF tracepoints; produces a `Support` value (never
// throws) and, through openCapture(), a typed Capture handle whose open errors carry a stable code.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION, MAX_RECORD } from '../../abi/records.js';

/** Why the probe cannot run, as a stable code. */
export type SupportCode = 'ENOTLINUX' | 'ENOADDON' | 'EABI' | 'ENOBTF' | 'EPERM' | 'ENOTRACEPOINT';

/** Result of probeSupport(). */
export type Support = { available: true } | { available: false; code: SupportCode; reason: string };

/** Options of openCapture(). */
export interface CaptureOptions {
  /** Records of this process are not produced (default: the current process). 0 keeps all. */
  ignorePid?: number;
  /** Ring buffer size, a power of two (default 32 MiB; `rae run` sizes it with ringBytesFor). */
  ringBufferBytes?: number;
  /** Queued bytes at which the kernel wakes the consumer (default 256 KiB). */
  wakeupBytes?: number;
  /** The consumer also drains after this long without a wakeup (default 10 ms). */
  maxLatencyMs?: number;
  /** EXEC records carry the new image's environment, proc.env (default true; false is the bench's baseline without it). */
  env?: boolean;
  /** Bytes of a syscall's I/O buffer recorded for the syscalls marked so (Falco's snaplen; default 80, at most MAX_DATA). */
  snaplen?: number;
  /**
   * Read-only opens of paths no loaded rule can match stay in the kernel (open-filter.ts; default true). false records
   * every open of the syscalls the rules name, as before: the differential test's and the bench's baseline.
   */
  filterOpens?: boolean;
}

/** Falco's default snaplen (falco_libs.snaplen): bytes of an I/O buffer recorded (the addon's default too). */
export const DEFAULT_SNAPLEN = 80;

/**
 * The default buf_size_preset: 4, Falco's, 8 MiB for each pair of CPUs. The ring's pages are
 * resident twice (the kernel maps them twice for the reader): 16 MB on 2 CPUs, 48 MB less than
 * 6, this engine's default before. `npm run bench -- capture-ring` (busy 2-CPU machine, 3 rounds
 * each, interleaved): no kernel drop at the capture bench's hardest steps with preset 3, 4, 5 or 6.
 */
export const DEFAULT_BUF_SIZE_PRESET = 4;
/** The highest preset (Falco's table ends at 10: 512 MiB a buffer). */
export const MAX_BUF_SIZE_PRESET = 10;

/**
 * The ring's size for Falco's buf_size_preset on `cpus` CPUs: what Falco's modern eBPF driver
 * allocates there (a buffer of 2^(preset-1) MiB for every cpus_for_each_buffer = 2 CPUs), as one
 * ring, rounded up to a power of two (a BPF ring buffer's size is one).
 */
export function ringBytesFor(preset: number, cpus: number): number {
  const bytes = (1 << 20) * 2 ** (preset - 1) * Math.ceil(Math.max(1, cpus) / 2);
  return 2 ** Math.ceil(Math.log2(bytes));
}

/** Kernel counters, summed over CPUs, plus the ring's fill. */
interface CaptureStats {
  emitted: number;
  /** Records dropped because the ring was full. */
  lost: number;
  /** Interesting syscalls that reached the probe. */
  seen: number;
  /** Records with a string cut short. */
  truncated: number;
  queuedBytes: number;
  ringBytes: number;
}

/** An attached probe. */
export interface Capture {
  /** fn() runs on the JS thread when records are queued; again only after a poll() returned 0. */
  watch(fn: () => void): void;
  /** Copies whole records into view (>= MAX_RECORD bytes); returns bytes; meta[0] = records. */
  poll(view: Uint8Array, meta?: Uint32Array): number;
  /**
   * Replaces the in-kernel interesting-syscall table: `ids` are recorded, those also in `dataIds` with their I/O buffer,
   * those also in `openPaths.syscalls` (opens) read-only only when their path is one of `exact` or starts with one of
   * `prefixes`, or their process's name (as the engine's thread table holds it) is one of `names` (open-filter.ts);
   * returns how many ids were set. Throws when the paths cannot be set (every open is then recorded).
   */
  setInterestingSyscalls(ids: readonly number[], dataIds?: readonly number[], openPaths?: { syscalls: readonly number[]; exact: readonly string[]; prefixes: readonly string[]; names?: readonly string[] }): number;
  /** The names (comm, as the /proc scan read them for the engine's table) of processes alive at the start, for the probe's test of `names` above; a process the probe has met since keeps what it wrote. */
  setProcessNames(pids: readonly number[], names: readonly Uint8Array[]): void;
  stats(): CaptureStats;
  /** Keep (ref) or not (unref) the event loop alive while watching. */
  ref(): void;
  unref(): void;
  /** Detaches the probe and frees the ring. Idempotent. */
  close(): void;
}

/** Error thrown by openCapture(): `code` is EPERM, ENOBTF, ENOTRACEPOINT, EPROBE or a SupportCode. */
interface CaptureError extends Error {
  code: string;
  errno?: number;
}

/** Offsets and sizes as compiled from events.h (for the layout test). */
type NativeLayout = Record<'hdr' | 'syscall' | 'proc' | 'exit' | 'caps' | 'sockaddr' | 'sizes' | 'kinds', Record<string, number>>;

/** The native kernel-record translator (probes/addon/ingest.h); ingest.ts drives it. */
export interface NativeIngest {
  /** Translates SYSCALL records of view[start..bytes); returns where it stopped (state[STOP] says why). */
  ingest(view: Uint8Array, start: number, bytes: number, memory: Uint8Array, plan: Int32Array, blob: Uint8Array, tidPid: Uint32Array, pidAddr: Uint32Array, state: Float64Array, offsets: Uint32Array, starts: BigUint64Array): number;
  /** The numbers of ingest.h as compiled. */
  ingestAbi: Record<string, number>;
}

interface Native extends NativeIngest {
  abiVersion: number;
  maxRecord: number;
  layout(): NativeLayout;
  checkKernel(): { ok: true } | { ok: false; code: SupportCode; reason: string };
  clocks(): { boottimeNs: bigint; realtimeNs: bigint };
  releaseFreeMemory(): boolean;
  Capture: new (opts: CaptureOptions) => Capture;
}

/** Where scripts/build-probe.sh puts the addon. */
export const ADDON_PATH = fileURLToPath(new URL('../../../probes/build/Release/rae_probe.node', import.meta.url));
const BTF_PATH = '/sys/kernel/btf/vmlinux';
const CAP = { SYS_ADMIN: 21, PERFMON: 38, BPF: 39 } as const;

let cached: { native: Native } | { error: string } | undefined;

/** The native module, or why it cannot be loaded (cached; the require never throws out). */
export function loadNative(): { native: Native } | { error: string } {
  if (cached) return cached;
  if (!existsSync(ADDON_PATH)) {
    cached = { error: `the probe addon is not built (${ADDON_PATH} is missing; run scripts/build-probe.sh)` };
    return cached;
  }
  try {
    const native = createRequire(import.meta.url)(ADDON_PATH) as Native;
    cached = { native };
  } catch (err) {
    cached = { error: `the probe addon does not load: ${(err as Error).message}` };
  }
  return cached;
}

/** Effective capability bits of this process, from /proc/self/status. */
function effectiveCaps(): bigint {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? BigInt(`0x${m[1]}`) : 0n;
}

function hasCap(caps: bigint, bit: number): boolean {
  return (caps & (1n << BigInt(bit))) !== 0n;
}

/** Cheap, side-effect-free check of everything the probe needs; says why it cannot run. */
export function probeSupport(): Support {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { available: false, code: 'ENOTLINUX', reason: `the kernel probe needs Linux on x86-64 (this is ${process.platform}/${process.arch})` };
  }
  const loaded = loadNative();
  if ('error' in loaded) return { available: false, code: 'ENOADDON', reason: loaded.error };
  const { native } = loaded;
  if (native.abiVersion !== ABI_VERSION || native.maxRecord !== MAX_RECORD) {
    return { available: false, code: 'EABI', reason: `the addon speaks record ABI ${native.abiVersion}, the host ${ABI_VERSION}; rebuild with scripts/build-probe.sh` };
  }
  if (!existsSync(BTF_PATH)) {
    return { available: false, code: 'ENOBTF', reason: `the kernel exposes no BTF (${BTF_PATH} is missing; it needs CONFIG_DEBUG_INFO_BTF=y)` };
  }
  const caps = effectiveCaps();
  // Named one by one: in a pod that adds some capabilities, the log must say which one is missing.
  const missing = hasCap(caps, CAP.SYS_ADMIN) ? [] : (['BPF', 'PERFMON'] as const).filter((c) => !hasCap(caps, CAP[c])).map((c) => `CAP_${c}`);
  if (missing.length > 0) {
    return { available: false, code: 'EPERM', reason: `loading the probe needs root, or CAP_BPF and CAP_PERFMON (this process runs as uid ${process.getuid?.()} without ${missing.join(' and ')})` };
  }
  // The kernel's answer does not change while the process runs; it parses the kernel's BTF (measured
  // about 0.4 s under load), and `rae run` asks twice on start (the source's set-up, then openCapture).
  kernelChecked ??= native.checkKernel();
  if (!kernelChecked.ok) return { available: false, code: kernelChecked.code, reason: kernelChecked.reason };
  return { available: true };
}

let kernelChecked: ReturnType<Native['checkKernel']> | undefined;

/** Loads and attaches the probe; throws a CaptureError with a stable code when it cannot. */
export function openCapture(opts: CaptureOptions = {}): Capture {
  const support = probeSupport();
  if (!support.available) {
    const err = new Error(support.reason) as CaptureError;
    err.code = support.code;
    throw err;
  }
  const { native } = loadNative() as { native: Native };
  return new native.Capture({ ignorePid: process.pid, ...opts });
}

/** CLOCK_BOOTTIME and CLOCK_REALTIME sampled together: epoch ns = ts_ns + (realtimeNs - boottimeNs). */
export function clocks(): { boottimeNs: bigint; realtimeNs: bigint } {
  const loaded = loadNative();
  if ('error' in loaded) throw new Error(loaded.error);
  return loaded.native.clocks();
}

/**
 * Hands the C library's free heap pages back to the kernel (glibc's malloc_trim, through the
 * addon); false when nothing was released or the addon does not load. A finished compile leaves
 * tens of MB free inside the malloc arenas of the threads that ran it, resident until then.
 */
export function releaseFreeMemory(): boolean {
  const loaded = loadNative();
  return 'native' in loaded && typeof loaded.native.releaseFreeMemory === 'function' && loaded.native.releaseFreeMemory();
}
