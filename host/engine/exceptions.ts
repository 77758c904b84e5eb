// Exceptions: a rule's `exceptions:` turned into condition text, exactly as Falco's
// build_rule_exception_infos does (reference/falco-language.md B.7). The generated text then
// goes through list substitution and parsing like any condition.
import type { ExceptionDef } from './collector.js';
import { quoteItem } from './lists.js';
import { MappedText } from './mapped-text.js';

const LIST_OPS = new Set(['in', 'intersects', 'pmatch']);

/** Falco's is_operator_for_list: the list operators and modifier comparisons. */
function isListComp(comp: string): boolean {
  return LIST_OPS.has(comp) || / (oneof|anyof|allof)$/.test(comp);
}

function parenItem(e: string): string {
  return e[0] === '(' ? e : `(${e})`;
}

/**
 * An exception value as it goes into the generated condition: Falco's quote_item (quoted when it
 * has a blank and is not quoted already), and also quoted when it has a comma, so that a value
 * such as the regex `^a{1,3}$` stays one value instead of splitting into two list items.
 */
function quoteValue(e: string): string {
  return e.includes(',') && e[0] !== '"' && e[0] !== "'" ? `"${e}"` : quoteItem(e);
}

/** Falco's compile-time check of the values' shape (build_rule_exception_infos); undefined when they fit the fields. */
function exceptionValuesProblem(ex: ExceptionDef): string | undefined {
  for (const v of ex.values) {
    if (!ex.fields.list && typeof v !== 'string') return 'Expected values array to contain a list of strings';
    if (ex.fields.list && (!Array.isArray(v) || v.length !== ex.fields.items.length)) return 'Fields and values lists must have equal length';
  }
  return undefined;
}

/** The text ` and not (...)` contributed by one exception ('' when it has no values); its values have the shape exceptionValuesProblem accepts. */
function exceptionText(ex: ExceptionDef): string {
  if (!ex.fields.list) {
    const field = ex.fields.items[0]!;
    const comp = ex.comps.items[0]!;
    const values = ex.values.filter((v): v is string => typeof v === 'string');
    if (values.length === 0) return '';
    return `(${field} ${comp} (${values.map(quoteValue).join(', ')}))`;
  }
  const tuples = ex.values.map((tuple) => {
    const t = tuple as Array<string | string[]>;
    const parts = ex.fields.items.map((field, k) => {
      const v = t[k]!;
      const comp = ex.comps.items[k]!;
      let istr: string;
      if (Array.isArray(v)) istr = `(${v.map(quoteValue).join(', ')})`;
      else istr = isListComp(comp) ? parenItem(v) : quoteValue(v);
      return ` ${field} ${comp} ${istr}`;
    });
    return `(${parts.join(' and ')})`;
  });
  return tuples.length === 0 ? '' : `(${tuples.join(' or ')})`;
}

/**
 * `(<cond>) and not (<e1>) ...` when the rule has exceptions; the condition itself otherwise.
 * An exception whose values do not fit its fields is returned instead (Falco fails the rule).
 */
export function conditionWithExceptions(cond: MappedText, exceptions: readonly ExceptionDef[]): { ok: true; text: MappedText } | { ok: false; message: string; exception: ExceptionDef } {
  if (exceptions.length === 0) return { ok: true, text: cond };
  const end = cond.origin(cond.text.length);
  const parts: Array<MappedText | string> = [MappedText.at('(', cond.origin(0)), cond, ')'];
  for (const ex of exceptions) {
    const message = exceptionValuesProblem(ex);
    if (message) return { ok: false, message, exception: ex };
    const text = exceptionText(ex);
    if (text) parts.push(MappedText.at(` and not ${text}`, end));
  }
  return { ok: true, text: MappedText.concat(parts) };
}
