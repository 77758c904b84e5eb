// Field resolution: a field as written in a condition (`proc.aname` + `[2]`, `evt.arg.flags`,
// `jevt.value` + `[/stage]`) to its table entry and argument, with libsinsp's error messages; and
// the longest-prefix match that output formats use (reference/falco-language.md A.8, D.1).
import { eventParamType, longestParamPrefix } from './event-params.js';
import { lookupDottedField, lookupField } from './tables.js';
import type { FieldDef, Source } from './types.js';

/** A resolved field, or libsinsp's message for why it does not resolve. */
export type ResolvedField = { ok: true; def: FieldDef; arg: string | undefined } | { ok: false; message: string };

const nonexistent = (name: string): ResolvedField => ({ ok: false, message: `filter_check called with nonexistent field ${name}` });
const fail = (message: string): ResolvedField => ({ ok: false, message });
const isPluginField = (def: FieldDef) => def.provider !== 'libsinsp';

/**
 * Resolves a field as written in a condition: `name` as the parser gives it (`evt.arg.flags`,
 * `proc.aname`) and the decoded bracket argument if any ('' for `[""]`). For `evt.arg`-like
 * fields the dotted suffix becomes the argument; `evt.rawarg` gets the parameter's raw type.
 */
export function resolveField(source: Source, name: string, arg: string | undefined): ResolvedField {
  const def = lookupField(source, name);
  if (def) return checkArg(def, name, arg);
  const dotted = lookupDottedField(source, name);
  if (!dotted || arg !== undefined) return nonexistent(arg === undefined ? name : `${name}[${arg}]`);
  const rest = name.slice(dotted.name.length + 1);
  if (dotted.name === 'evt.arg' || dotted.name === 'evt.rawarg') {
    const param = longestParamPrefix(rest);
    if (param === undefined) return fail(`unknown event argument ${rest}`);
    if (param !== rest) return nonexistent(name);
    return { ok: true, def: withParamType(dotted, param), arg: param };
  }
  return { ok: true, def: dotted, arg: rest };
}

function checkArg(def: FieldDef, name: string, arg: string | undefined): ResolvedField {
  const written = arg === undefined ? name : `${name}[${arg}]`;
  if (arg === undefined) {
    if (def.arg === 'required') return fail(`filter '${written}': ${def.name} requires an argument but none provided`);
    return { ok: true, def, arg };
  }
  if (def.arg === 'none') {
    return fail(`filter '${written}': ${def.name} does not allow nor require an argument but one is provided: ${arg}`);
  }
  if (def.name === 'evt.arg' || def.name === 'evt.rawarg') return eventArg(def, arg);
  if (def.argKind === 'index') {
    const problem = indexProblem(arg, isPluginField(def));
    if (problem) return fail(isPluginField(def) ? `filter ${written} ${def.name}${problem}${arg}` : `${arg} is not a valid number`);
  }
  return { ok: true, def, arg };
}

/** `evt.arg[0]`, `evt.arg[flags]`, `evt.rawarg[res]`; raw arguments must be named. */
function eventArg(def: FieldDef, arg: string): ResolvedField {
  if (/^[0-9]+$/.test(arg)) {
    if (def.name === 'evt.rawarg') return fail('evt.arg fields must be expressed explicitly');
    return { ok: true, def, arg };
  }
  if (eventParamType(arg) === undefined) return fail(`unknown event argument ${arg}`);
  return { ok: true, def: def.name === 'evt.rawarg' ? withParamType(def, arg) : def, arg };
}

/** libsinsp plugin_filtercheck.cpp extract_arg_index wording; undefined when valid. */
function indexProblem(arg: string, plugin: boolean): string | undefined {
  if (!/^[0-9]*$/.test(arg)) return ' has an invalid index argument not composed only by digits: ';
  if (arg.length === 0 || (plugin && arg.length > 1 && arg[0] === '0')) return ' has an invalid index argument starting with 0: ';
  return undefined;
}

function withParamType(def: FieldDef, param: string): FieldDef {
  if (def.name !== 'evt.rawarg') return def;
  return { ...def, type: eventParamType(param) ?? 'PT_DYN' };
}

/** A field reference found at the start of an output-format text. */
export interface FieldPrefixMatch {
  /** The field name as written, without the bracket argument (`evt.arg.flags`, `proc.aname`). */
  name: string;
  /** The effective argument: the bracket text or the dotted suffix. */
  arg: string | undefined;
  /** Characters consumed from the text, bracket argument included. */
  length: number;
  def: FieldDef;
}

const NAME_PREFIX = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*/;

/**
 * The longest prefix of `text` that is a printable field reference with optional `[arg]`
 * (libs >= 0.24: try the whole remainder, then shorter, until one compiles). Filter-only fields
 * never match. Undefined when no prefix is a field.
 */
export function matchFieldPrefix(source: Source, text: string): FieldPrefixMatch | undefined {
  const m = NAME_PREFIX.exec(text);
  if (!m) return undefined;
  for (let len = m[0].length; len > 0; len--) {
    const name = text.slice(0, len);
    if (text[len] === '[') {
      const close = text.indexOf(']', len + 1);
      if (close > len) {
        const r = resolveField(source, name, text.slice(len + 1, close));
        if (r.ok && !r.def.filterOnly) return { name, arg: r.arg, length: close + 1, def: r.def };
      }
    }
    const r = resolveField(source, name, undefined);
    if (r.ok && !r.def.filterOnly) return { name, arg: r.arg, length: len, def: r.def };
  }
  return undefined;
}
