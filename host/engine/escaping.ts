// String literal escaping for the condition language, after libsinsp `filter/escaping.cpp`
// (reference/falco-language.md A.2 and A.10). Consumes raw quoted tokens (quotes included) and
// decoded values; produces decoded values (or an error message) and the canonical printed form.
// A decoded value is a raw byte string (raw-text.ts): `\xHH` is one byte, whatever it encodes.
import { decodeRaw, encodeRaw, rawByte } from './raw-text.js';

/** The result of decoding a quoted token: the value, or libsinsp's error message. */
export type UnescapeResult = { ok: true; value: string } | { ok: false; message: string };

const HEX = /^[0-9a-fA-F]{2}$/;

/**
 * Decodes a raw quoted token such as `'a\'b'` or `"x\ty"` (delimiters included).
 * `\b \f \n \r \t \\ \/` as in C; `\"` only inside `"…"` and `\'` only inside `'…'`;
 * `\xHH` is one byte (exactly two hex digits; Falco 0.45), so `"\xc3\xa9"` is `é` and `"\xff"` the
 * raw byte 0xFF that no UTF-8 text holds (raw-text.ts); `\ ` (backslash-space) is a
 * single backslash and the space is dropped, a legacy form kept for old rules; anything else
 * is `unsupported string escape sequence: \c`.
 */
export function unescapeQuoted(raw: string): UnescapeResult {
  const quote = raw.charCodeAt(0);
  const end = raw.length - 1;
  let out = '';
  let runStart = 1;
  let raw8 = false;
  for (let i = 1; i < end; i++) {
    if (raw.charCodeAt(i) !== 92 /* \ */) continue;
    out += raw.slice(runStart, i);
    i++;
    const c = raw[i] ?? '';
    switch (c) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case ' ': // legacy: `\ ` stands for a backslash (libsinsp escaping.cpp keeps it for old rules)
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case '"':
        if (quote !== 34) return { ok: false, message: `invalid \\" escape in '-quoted string` };
        out += '"';
        break;
      case "'":
        if (quote !== 39) return { ok: false, message: `invalid \\' escape in "-quoted string` };
        out += "'";
        break;
      case 'x': {
        const hex = i + 2 < end ? raw.slice(i + 1, i + 3) : '';
        if (!HEX.test(hex)) return { ok: false, message: 'unsupported string escape sequence: \\x' };
        const byte = parseInt(hex, 16);
        raw8 ||= byte >= 0x80;
        out += rawByte(byte);
        i += 2;
        break;
      }
      default:
        return { ok: false, message: `unsupported string escape sequence: \\${c}` };
    }
    runStart = i + 1;
  }
  const value = out + raw.slice(runStart, end);
  // bytes written one by one may form UTF-8 characters: the canonical string of those bytes
  return { ok: true, value: raw8 ? decodeRaw(encodeRaw(value)) : value };
}

/** True when escapeStr must quote `v` (libsinsp quotes on these characters). */
function needsQuotes(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    switch (v.charCodeAt(i)) {
      case 0:
      case 8:
      case 9:
      case 10:
      case 12:
      case 13: // NUL \b \t \n \f \r
      case 32:
      case 34:
      case 39:
      case 61:
      case 92: // space " ' = \
        return true;
      default:
        break;
    }
  }
  return false;
}

/**
 * libsinsp `escape_str`: a value is printed raw unless it contains `\b \f \n \r \t`, space, `=`,
 * `\`, `"`, `'` or NUL; then it is wrapped in `"…"` with `\b \f \n \r \t \\ \"` escaped (NUL as
 * `\x00`; `'` and `=` stay literal). Two deliberate differences keep every print parseable: the
 * empty string prints as `""` (upstream prints nothing) and a final backslash as `\x5c`
 * (upstream's `"…\\"` never closes, reference A.2).
 */
export function escapeStr(v: string): string {
  if (v === '') return '""';
  if (!needsQuotes(v)) return v;
  let out = '"';
  for (let i = 0; i < v.length; i++) {
    const ch = v[i]!;
    switch (ch) {
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      // A final backslash would sit before the closing quote, which libsinsp's lexer then does
      // not see as closing; `\x5c` keeps the printed form parseable.
      case '\\':
        out += i === v.length - 1 ? '\\x5c' : '\\\\';
        break;
      case '"':
        out += '\\"';
        break;
      case '\0':
        out += '\\x00';
        break;
      default:
        out += ch;
    }
  }
  return out + '"';
}
