// Rule output templates (reference/falco-language.md D.1): an `output:` text to literal text and
// `%field` tokens (alerts render them in host/output/from-match.ts). After `%` come an optional
// decimal width and the longest prefix that is a printable field (fields/resolve.ts
// matchFieldPrefix); the rest is literal text. There is no escape for a literal `%`.
// Transformers in outputs (`%tolower(proc.name)`, libs >= 0.17) are rejected with a clear error.
import { matchFieldPrefix, resolveField, type FieldDef, type Source } from './fields.js';

/** Literal text of a template. */
interface OutputText {
  kind: 'text';
  text: string;
  /** Offset of the text in the template. */
  offset: number;
}

/** A `%field` of a template. */
interface OutputTokenField {
  kind: 'field';
  /** The field name as written, without the bracket argument (`proc.aname`, `evt.arg.flags`). */
  name: string;
  /** The effective argument: bracket text or dotted suffix. */
  arg: string | undefined;
  /** The token as written without `%` and width: the `output_fields` key (`proc.aname[2]`). */
  canonical: string;
  /** `%N<field>`: pad with blanks or truncate to exactly N characters. */
  width?: number;
  def: FieldDef;
  /** Offset of the `%` in the template. */
  offset: number;
}

export type OutputToken = OutputText | OutputTokenField;

/** A parsed template, or the first problem with its offset in the template. */
export type OutputParse = { ok: true; tokens: OutputToken[] } | { ok: false; message: string; offset: number };

const TRANSFORMER = /^(tolower|toupper|b64|basename|len|join|concat|getopt)\(/;
const NAME = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*/;
/** Longest width accepted; libsinsp reads it with sscanf("%d"). */
const MAX_WIDTH = 2147483647;

/** Parses a rule output template for a source. Never throws. */
export function parseOutput(source: Source, text: string): OutputParse {
  const tokens: OutputToken[] = [];
  let textStart = 0;
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '%') {
      i++;
      continue;
    }
    if (i > textStart) tokens.push({ kind: 'text', text: text.slice(textStart, i), offset: textStart });
    const pct = i;
    if (i === text.length - 1) return fail('invalid formatting syntax: formatting cannot end with a %', pct);
    let j = i + 1;
    while (j < text.length && text[j]! >= '0' && text[j]! <= '9') j++;
    if (j === text.length) return fail('invalid formatting syntax: formatting cannot end with a number', pct);
    // A width of 0 means none, as in libsinsp (eventformatter.cpp: `if(tks != 0)`).
    const width = j > i + 1 ? Math.min(Number(text.slice(i + 1, j)), MAX_WIDTH) || undefined : undefined;
    const rest = text.slice(j);
    const m = matchFieldPrefix(source, rest);
    if (!m) return fail(unknownMessage(source, rest), pct);
    const canonical = rest.slice(0, m.length);
    const tok: OutputTokenField = { kind: 'field', name: m.name, arg: m.arg, canonical, def: m.def, offset: pct };
    if (width !== undefined) tok.width = width;
    tokens.push(tok);
    i = j + m.length;
    textStart = i;
  }
  if (i > textStart) tokens.push({ kind: 'text', text: text.slice(textStart, i), offset: textStart });
  return { ok: true, tokens };
}

function fail(message: string, offset: number): OutputParse {
  return { ok: false, message, offset };
}

/** Why nothing after a `%` is a printable field. */
function unknownMessage(source: Source, rest: string): string {
  const t = TRANSFORMER.exec(rest);
  if (t) return `field transformers are not supported in outputs: %${t[1]}(...) (use the plain field)`;
  const name = NAME.exec(rest)?.[0];
  if (name) {
    const r = resolveField(source, name, undefined);
    if (r.ok && r.def.filterOnly) return `${name} is a filter-only field and cannot be used in an output`;
  }
  return `unknown filter: ${rest}`;
}

/** The distinct `output_fields` keys of a template, in first-use order. */
export function outputFieldKeys(tokens: readonly OutputToken[]): string[] {
  const keys = new Set<string>();
  for (const tok of tokens) if (tok.kind === 'field') keys.add(tok.canonical);
  return [...keys];
}

/** The template as written back from its tokens (`%field` as canonical, widths kept): Falco's output_compiled. */
export function templateText(tokens: readonly OutputToken[]): string {
  return tokens.map((t) => (t.kind === 'text' ? t.text : `%${t.width ?? ''}${t.canonical}`)).join('');
}
