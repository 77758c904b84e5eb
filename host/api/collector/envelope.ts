// Sentry envelope parser (develop.sentry.dev/sdk/envelopes/): a JSON header line, then items,
// each a JSON header line and a payload of `length` bytes (or up to the next newline when the
// header has no length). Consumes the decompressed body; produces the header and items, or null
// when the body is not an envelope.

/** One envelope item: its header (`type`, ...) and raw payload. */
export interface EnvelopeItem {
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

function lineAt(buf: Buffer, pos: number): { bytes: Buffer; text: string; next: number } {
  const end = buf.indexOf(NL, pos);
  const bytes = buf.subarray(pos, end === -1 ? buf.length : end);
  return { bytes, text: bytes.toString('utf8'), next: end === -1 ? buf.length : end + 1 };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Parses an envelope; null when the header or an item header is not a JSON object, or a length overruns. */
export function parseEnvelope(body: Buffer): Envelope | null {
  const first = lineAt(body, 0);
  const header = parseObject(first.text);
  if (!header) return null;
  const items: EnvelopeItem[] = [];
  let pos = first.next;
  while (pos < body.length && items.length < MAX_ITEMS) {
    const line = lineAt(body, pos);
    pos = line.next;
    if (line.text.trim() === '') continue; // trailing newlines
    const itemHeader = parseObject(line.text);
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
