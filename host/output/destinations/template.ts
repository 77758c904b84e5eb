// falcosidekick's `templatedfields`: each value is a Go text/template executed with the alert's
// output_fields map as `.`, and the rendered text becomes a new output field. We implement the
// subset such values use (docs/forwarder.md): literal text, and actions `{{ EXPR }}` where EXPR is
//   .key              the output field `key` (dots belong to the key: `.k8s.ns.name`)
//   index X "key"     the member `key` of X (`.` = the whole map; `.OutputFields` in messageformat)
//   "text"            a string literal
//   or A B ...        the first non-empty argument (Go's `or`: empty = missing, "", 0, false)
//   ( EXPR )          grouping
// A missing field renders as Go's `<no value>`. Anything else is a parse error at start.
import type { OutputFieldValue } from '../alert.js';

/** What a template reads: output fields, or (messageformat) the alert's members. */
type TemplateData = { readonly [key: string]: OutputFieldValue | TemplateData };
type Value = OutputFieldValue | TemplateData | undefined;
type Expr = (f: TemplateData) => Value;

/** A parsed template; rendering never throws. */
export type Template = (data: TemplateData) => string;

const TOKEN = /\s*("(?:[^"\\]|\\.)*"|\(|\)|\.[^\s()"]*|[A-Za-z_][A-Za-z0-9_]*)/y;

function tokenize(action: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < action.length) {
    if (action.slice(at).trim() === '') break;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(action);
    if (!m) throw new Error(`unexpected ${JSON.stringify(action.slice(at).trim())}`);
    tokens.push(m[1] as string);
    at = TOKEN.lastIndex;
  }
  return tokens;
}

function isEmpty(v: Value): boolean {
  return v === undefined || v === null || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
}

function isMap(v: Value): v is TemplateData {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseExpr(tokens: string[], pos: { i: number }): Expr {
  const args: Expr[] = [];
  let fn: string | undefined;
  while (pos.i < tokens.length && tokens[pos.i] !== ')') {
    const t = tokens[pos.i++] as string;
    if (t === '(') {
      args.push(parseExpr(tokens, pos));
      if (tokens[pos.i++] !== ')') throw new Error('missing )');
    } else if (t.startsWith('"')) {
      const s = JSON.parse(t) as string;
      args.push(() => s);
    } else if (t === '.') {
      args.push((f) => f);
    } else if (t.startsWith('.')) {
      const key = t.slice(1);
      args.push((f) => (Object.hasOwn(f, key) ? f[key] : undefined));
    } else if (args.length === 0 && fn === undefined && (t === 'or' || t === 'index')) {
      fn = t;
    } else {
      throw new Error(`unsupported ${JSON.stringify(t)} (supported: .key, index . "key", or, "text", parentheses)`);
    }
  }
  if (fn === 'index') {
    const [of, key] = args;
    if (args.length !== 2 || of === undefined || key === undefined) throw new Error('index takes a map and one key');
    return (f) => {
      const m = of(f);
      const k = key(f);
      return isMap(m) && typeof k === 'string' && Object.hasOwn(m, k) ? m[k] : undefined;
    };
  }
  if (fn === 'or') {
    if (args.length === 0) throw new Error('or needs arguments');
    return (f) => {
      let v: Value;
      for (const a of args) {
        v = a(f);
        if (!isEmpty(v)) return v;
      }
      return v;
    };
  }
  if (args.length !== 1) throw new Error('expected one value');
  return args[0] as Expr;
}

function show(v: Value): string {
  if (v === undefined) return '<no value>';
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return `[${v.join(' ')}]`;
  if (isMap(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${show(v[k])}`)
      .join(' ')}]`;
  return String(v);
}

/** Parses a template; throws an Error with the reason when it uses something outside the subset. */
export function parseTemplate(text: string): Template {
  const parts: Array<string | Expr> = [];
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{{', at);
    if (open < 0) {
      parts.push(text.slice(at));
      break;
    }
    parts.push(text.slice(at, open));
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw new Error('unclosed {{');
    let action = text.slice(open + 2, close);
    // {{- and -}} trim the neighbouring white space, as in Go.
    if (action.startsWith('- ')) {
      parts.push(((parts.pop() as string | undefined) ?? '').trimEnd());
      action = action.slice(1);
    }
    let trimNext = false;
    if (action.endsWith(' -')) {
      trimNext = true;
      action = action.slice(0, -1);
    }
    const tokens = tokenize(action);
    const pos = { i: 0 };
    const expr = parseExpr(tokens, pos);
    if (pos.i !== tokens.length) throw new Error('unbalanced )');
    parts.push(expr);
    at = close + 2;
    if (trimNext) while (at < text.length && /\s/.test(text[at] as string)) at++;
  }
  return (data) => parts.map((p) => (typeof p === 'string' ? p : show(p(data)))).join('');
}
