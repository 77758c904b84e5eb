// Compact JSON text the way Falco's nlohmann::json dump() writes it (reference/falco-language.md
// D.4): object keys sorted by their UTF-8 bytes (std::map order), no spaces, integers exact
// (bigint printed as digits, never through a float), non-finite numbers as null, and invalid
// UTF-16 (lone surrogates, the JS analogue of invalid UTF-8) replaced by U+FFFD as nlohmann's
// `error_handler_t::replace` does.

/** A value the writer accepts; `undefined` members of objects are skipped. */
export type JsonOut = null | boolean | number | bigint | string | readonly JsonOut[] | { readonly [key: string]: JsonOut | undefined };

/**
 * Orders strings by Unicode code point, which is the byte order of their UTF-8 encodings.
 * Plain `<` on JS strings compares UTF-16 units and puts U+E000..U+FFFF after astral characters.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return rank(ca) - rank(cb);
  }
  return a.length - b.length;
}

function rank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000; // surrogates stand for code points above U+FFFF
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const nativeWellFormed = (String.prototype as { toWellFormed?: (this: string) => string }).toWellFormed;

/** `s` with every lone surrogate replaced by U+FFFD (String.prototype.toWellFormed). */
export function toWellFormed(s: string): string {
  return nativeWellFormed ? nativeWellFormed.call(s) : s.replace(LONE_SURROGATE, '\uFFFD');
}

/** A JSON string literal: control characters escaped, lone surrogates replaced by U+FFFD. */
export function jsonString(s: string): string {
  return JSON.stringify(toWellFormed(s));
}

/** Writes `value` as one compact JSON text with recursively sorted keys. */
export function writeJson(value: JsonOut): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(v: JsonOut, out: string[]): void {
  if (v === null) out.push('null');
  else if (typeof v === 'string') out.push(jsonString(v));
  else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
  else if (typeof v === 'bigint') out.push(v.toString());
  else if (typeof v === 'number') out.push(Number.isFinite(v) ? String(v) : 'null');
  else if (Array.isArray(v)) {
    out.push('[');
    (v as readonly JsonOut[]).forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, out);
    });
    out.push(']');
  } else {
    const obj = v as { readonly [key: string]: JsonOut | undefined };
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort(compareCodePoints);
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(jsonString(k), ':');
      write(obj[k] as JsonOut, out);
    });
    out.push('}');
  }
}
