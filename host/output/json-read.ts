// A strict JSON reader for alert payloads, shaped after Go's json.Decoder as falcosidekick uses
// it (reference/module-and-forwarder.md §4): it reads the first JSON value of the text and ignores
// whatever follows; integers keep their exact value (bigint beyond 2^53, like `UseNumber`), so
// `evt.time` nanoseconds survive. Errors are values with the offset of the problem; nesting depth
// is capped.
//
// value  = ws ( object | array | string | number | "true" | "false" | "null" ) ws
// object = "{" ws [ string ws ":" value { "," ws string ws ":" value } ] "}"
// array  = "[" [ value { "," value } ] "]"
// number = [ "-" ] ( "0" | digit1-9 { digit } ) [ "." digit { digit } ] [ ( "e" | "E" ) [ "+" | "-" ] digit { digit } ]

/** A parsed JSON value; integers outside the safe range are bigint. */
export type JsonIn = null | boolean | number | bigint | string | JsonIn[] | { [key: string]: JsonIn };

/** The result of readJson: the first value, or a message with the byte offset. */
export type ReadResult = { ok: true; value: JsonIn } | { ok: false; error: string };

const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const LITERALS = [
  ['true', true],
  ['false', false],
  ['null', null],
] as const;

/** Returned by a production that failed; the message is in `Reader.error`. */
const FAIL: unique symbol = Symbol('fail');
type Out<T> = T | typeof FAIL;

class Reader {
  pos = 0;
  error = '';
  constructor(readonly text: string) {}

  fail(what: string): typeof FAIL {
    this.error = `${what} at offset ${this.pos}`;
    return FAIL;
  }

  ws(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      this.pos++;
    }
  }

  value(depth: number): Out<JsonIn> {
    this.ws();
    if (depth > MAX_DEPTH) return this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const c = this.text[this.pos];
    if (c === undefined) return this.fail('unexpected end of input');
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    for (const [word, val] of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return val;
      }
    }
    return this.fail(`unexpected character ${JSON.stringify(c)}`);
  }

  object(depth: number): Out<JsonIn> {
    const obj: { [key: string]: JsonIn } = {};
    this.pos++;
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return obj;
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') return this.fail('expected a string key');
      const key = this.string();
      if (key === FAIL) return FAIL;
      this.ws();
      if (this.text[this.pos] !== ':') return this.fail("expected ':' after an object key");
      this.pos++;
      const v = this.value(depth + 1);
      if (v === FAIL) return FAIL;
      // A "__proto__" key must stay an own property, never a prototype change.
      Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
      this.ws();
      const c = this.text[this.pos];
      if (c !== '}' && c !== ',') return this.fail("expected ',' or '}' in an object");
      this.pos++;
      if (c === '}') return obj;
    }
  }

  array(depth: number): Out<JsonIn> {
    const arr: JsonIn[] = [];
    this.pos++;
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return arr;
    }
    for (;;) {
      const v = this.value(depth + 1);
      if (v === FAIL) return FAIL;
      arr.push(v);
      this.ws();
      const c = this.text[this.pos];
      if (c !== ']' && c !== ',') return this.fail("expected ',' or ']' in an array");
      this.pos++;
      if (c === ']') return arr;
    }
  }

  string(): Out<string> {
    const t = this.text;
    const open = this.pos;
    let i = open + 1;
    // Fast path: no escapes.
    while (i < t.length) {
      const c = t.charCodeAt(i);
      if (c === 0x22 || c === 0x5c || c < 0x20) break;
      i++;
    }
    if (t.charCodeAt(i) === 0x22) {
      this.pos = i + 1;
      return t.slice(open + 1, i);
    }
    let end = i;
    while (end < t.length && t.charCodeAt(end) !== 0x22) end += t.charCodeAt(end) === 0x5c ? 2 : 1;
    if (end >= t.length) {
      this.pos = t.length;
      return this.fail('unterminated string');
    }
    const literal = t.slice(open, end + 1);
    // The slice is one complete literal: check escapes and control characters, then decode.
    const checked = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"$/.test(literal);
    if (!checked) return this.fail('invalid string (bad escape or control character)');
    this.pos = end + 1;
    return JSON.parse(literal) as string;
  }

  number(): Out<number | bigint> {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return this.fail('invalid number');
    this.pos += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  }
}

/** Reads the first JSON value of `text` (trailing text is ignored, as Go's json.Decoder does). */
export function readJson(text: string): ReadResult {
  const r = new Reader(text);
  r.ws();
  if (r.pos >= text.length) return { ok: false, error: 'empty body' };
  const value = r.value(0);
  if (value === FAIL) return { ok: false, error: `invalid JSON: ${r.error}` };
  return { ok: true, value };
}
