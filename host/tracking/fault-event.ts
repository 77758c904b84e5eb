// One fault of the engine as a Sentry event (develop.sentry.dev/sdk/event-payloads/): the
// exception (type, value, frames parsed from a V8 stack, oldest first as Sentry orders them,
// files relative to the package so fingerprints do not depend on where it is installed), the
// component as the transaction (so faults without frames group by component), and version,
// rules hash, node and component as tags. Consumes a Fault and the engine's context; produces the
// event payload.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** A fault to report. */
export interface Fault {
  /** The part of the engine: process, compile-worker, evaluator, output, webhook, syscall, ... */
  component: string;
  /** The exception type: an Error's name, or a stable code (EWORKER, OutputFailed). */
  type: string;
  message: string;
  /** A V8 stack (Error.stack) when there is one. */
  stack?: string;
  /** How many occurrences this event stands for (aggregated faults), 1 when absent. */
  count?: number;
}

/** What every event carries about the engine. */
export interface EngineContext {
  version: string;
  hostname: string;
  /** SHA-256 of the loaded rules files, '' until the first load. */
  rulesHash: string;
}

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/;
const MAX_FRAMES = 50;

interface Frame {
  function: string;
  filename: string;
  abs_path: string;
  module?: string;
  lineno: number;
  colno: number;
  in_app: boolean;
}

/** The frames of a V8 stack, oldest first; [] when it has none. */
function stackFrames(stack: string | undefined): Frame[] {
  if (!stack) return [];
  const frames: Frame[] = [];
  for (const line of stack.split('\n')) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const abs = m[2]!.startsWith('file://') ? fileURLToPath(m[2]!) : m[2]!;
    const inPackage = abs.startsWith(PACKAGE_ROOT);
    const filename = inPackage ? abs.slice(PACKAGE_ROOT.length) : abs;
    frames.push({
      function: m[1] ?? '?',
      filename,
      abs_path: abs,
      ...(inPackage && !filename.startsWith('node_modules/') ? { module: filename.replace(/\.[cm]?[jt]s$/, '') } : {}),
      lineno: Number(m[3]),
      colno: Number(m[4]),
      in_app: inPackage && !filename.includes('node_modules/'),
    });
    if (frames.length === MAX_FRAMES) break;
  }
  return frames.reverse();
}

/** The Sentry event of a fault. */
export function faultEvent(f: Fault, ctx: EngineContext, now = Date.now()): Record<string, unknown> {
  const frames = stackFrames(f.stack);
  const count = f.count ?? 1;
  return {
    event_id: randomUUID().replaceAll('-', ''),
    timestamp: now / 1000,
    platform: 'node',
    level: 'error',
    logger: 'runtime-audit-engine',
    transaction: f.component,
    server_name: ctx.hostname,
    release: `runtime-audit-engine@${ctx.version}`,
    tags: { component: f.component, version: ctx.version, rules_hash: ctx.rulesHash || 'none', node: ctx.hostname },
    extra: { occurrences: count },
    exception: { values: [{ type: f.type, value: count > 1 ? `${f.message} (${count} times)` : f.message, ...(frames.length > 0 ? { stacktrace: { frames } } : {}) }] },
  };
}
