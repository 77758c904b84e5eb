// JSON helpers with the semantics of the Go plugins (valyala/fastjson, encoding/json):
// key-path lookup where an array step takes a decimal index, value-to-text conversion (strings
// raw, everything else as JSON text), RFC 6901 pointer lookup as the json plugin does it, and
// Go's json.Indent layout for `json.obj`. Consumed by extract.ts and the k8saudit field code.

/** A parsed JSON value (the result of JSON.parse). */
export type Json = unknown;

/** fastjson Value.Get(keys...): object members by name, array elements by decimal index. */
export function getPath(v: Json, ...keys: string[]): Json | undefined {
  return getKeys(v, keys);
}

const DECIMAL = /^[+-]?[0-9]+$/;
const hasOwn = Object.prototype.hasOwnProperty;

const OBJECT_PROTO = Object.prototype;

/** getPath with the keys as one array (no rest-argument copy on hot paths). */
export function getKeys(v: Json, keys: readonly string[]): Json | undefined {
  let cur: Json = v;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (typeof cur !== 'object' || cur === null) return undefined;
    if (Array.isArray(cur)) {
      // strconv.Atoi accepts an optional sign; negative or out-of-range indexes miss.
      if (!DECIMAL.test(k)) return undefined;
      const n = Number(k);
      if (!Number.isSafeInteger(n) || n < 0 || n >= cur.length) return undefined;
      cur = cur[n];
    } else {
      // One lookup: a parsed JSON member is never undefined nor a function, so only a hit that
      // may come from Object.prototype (a method, or __proto__ itself) needs the own-key check.
      const next: Json = (cur as Record<string, Json>)[k];
      if (next === undefined) return undefined;
      if ((typeof next === 'function' || next === OBJECT_PROTO) && !hasOwn.call(cur, k)) return undefined;
      cur = next;
    }
  }
  return cur;
}

/** The plugins' jsonValueAsString: a string as is, any other value (null included) as JSON text. */
export function asText(v: Json): string {
  if (typeof v === 'string') return v;
  // Scalars without a JSON.stringify call (the same text: a finite number's shortest form).
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return JSON.stringify(v) ?? 'null';
}

/** True for a JSON object (not an array). */
export function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The json plugin's pointer walk (plugins/json/pkg/json/json.go): one leading '/' dropped, the
 * rest split on '/', each token unescaped (`~1` -> `/`, then `~0` -> `~`) and looked up like
 * getPath. An empty pointer is an error (undefined).
 */
export function jsonPointer(root: Json, pointer: string): Json | undefined {
  if (pointer.length === 0) return undefined;
  return getKeys(root, pointerKeys(pointer));
}

/** The lookup keys of a non-empty json plugin pointer (split once per pointer text, bounded cache). */
export function pointerKeys(pointer: string): readonly string[] {
  let keys = POINTER_KEYS.get(pointer);
  if (keys === undefined) {
    const body = pointer.startsWith('/') ? pointer.slice(1) : pointer;
    keys = body.split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (POINTER_KEYS.size < 1024) POINTER_KEYS.set(pointer, keys);
  }
  return keys;
}

/** Split pointers by text (rules use a few fixed pointers; bounded). */
const POINTER_KEYS = new Map<string, string[]>();

/**
 * Go's json.Indent(dst, src, "", "  ") of a JSON text: insignificant blanks dropped, one member
 * or element per line, `": "` after keys, empty objects and arrays kept as `{}` / `[]`; string
 * and number tokens are copied byte for byte.
 */
export function goIndent(src: string): string {
  let out = '';
  let depth = 0;
  let needIndent = false;
  const newline = (d: number) => '\n' + '  '.repeat(d);
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    if (needIndent && c !== ']' && c !== '}') {
      out += newline(depth);
      needIndent = false;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j;
    } else if (c === '{' || c === '[') {
      out += c;
      depth++;
      needIndent = true;
    } else if (c === '}' || c === ']') {
      depth--;
      if (needIndent) needIndent = false;
      else out += newline(depth);
      out += c;
    } else if (c === ',') {
      out += ',' + newline(depth);
    } else if (c === ':') {
      out += ': ';
    } else {
      out += c;
    }
  }
  return out;
}
