// Sentry envelope parser (develop.sentry.dev/sdk/envelopes/): a JSON header line, then items,
// each a JSON header line and a payload of `length` bytes (or up to the next newline when the
// header has no length). Consumes the decompressed body; produces the header and items, or null
// when the body is not an envelope. Header lines must be UTF-8 JSON (payloads may be binary).
import { utf8Text } from '../body.js';

/** One envelope item: its header (`type`, ...) and raw payload. */
interface EnvelopeItem {
  header: Record<string, unknown>;
  payload: Buffer;
}

/** A parsed envelope. */
export interface Envelope {
  header: Record<string, unknown>;
  items: EnvelopeItem[];
}

const NL = 0x0a;
const MAX_ITEMS = 100;

function lineAt(buf: Buffer, pos: number): { bytes: Buffer; next: number } {
  const end = buf.indexOf(NL, pos);
  const bytes = buf.subarray(pos, end === -1 ? buf.length : end);
  return { bytes, next: end === -1 ? buf.length : end + 1 };
}

function parseObject(bytes: Buffer): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(utf8Text(bytes));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Parses an envelope; null when the header or an item header is not a JSON object, or a length overruns. */
export function parseEnvelope(body: Buffer): Envelope | null {
  const first = lineAt(body, 0);
  const header = parseObject(first.bytes);
  if (!header) return null;
  const items: EnvelopeItem[] = [];
  let pos = first.next;
  while (pos < body.length && items.length < MAX_ITEMS) {
    const line = lineAt(body, pos);
    pos = line.next;
    if (line.bytes.toString('latin1').trim() === '') continue; // trailing newlines
    const itemHeader = parseObject(line.bytes);
    if (!itemHeader) return null;
    const length = itemHeader.length;
    let payload: Buffer;
    if (typeof length === 'number' && Number.isInteger(length) && length >= 0) {
      if (pos + length > body.length) return null;
      payload = body.subarray(pos, pos + length);
      pos += length;
      if (body[pos] === NL) pos++;
    } else {
      const p = lineAt(body, pos);
      payload = p.bytes;
      pos = p.next;
    }
    items.push({ header: itemHeader, payload });
  }
  return { header, items };
}

/** The public key of a DSN (`https://<key>@host/...`), or undefined. */
export function keyFromDsn(dsn: unknown): string | undefined {
  if (typeof dsn !== 'string') return undefined;
  try {
    return decodeURIComponent(new URL(dsn).username) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The item types of Sentry's envelope protocol (develop.sentry.dev/sdk/envelope-items/). GitLab's
 * collector answered 400 to every type but event and transaction; SDKs send the others in the
 * same envelopes, so those are accepted (and dropped) and only a type Sentry does not define is 400.
 */
const SENTRY_ITEM_TYPES = new Set([
  'event',
  'transaction',
  'attachment',
  'session',
  'sessions',
  'client_report',
  'user_report',
  'feedback',
  'check_in',
  'profile',
  'profile_chunk',
  'replay_event',
  'replay_recording',
  'replay_video',
  'statsd',
  'metric_meta',
  'span',
  'otel_span',
  'log',
  'otel_log',
  'trace_metric',
]);

/** True when `type` is an item type of the Sentry protocol. */
export function isSentryItemType(type: unknown): boolean {
  return typeof type === 'string' && SENTRY_ITEM_TYPES.has(type);
}
