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

/** The text ` and not (...)` contributed by one exception ('' when it has no values). */
export function exceptionText(ex: ExceptionDef): string {
  if (!ex.fields.list) {
    const field = ex.fields.items[0]!;
    const comp = ex.comps.items[0]!;
    const values = ex.values.filter((v): v is string => typeof v === 'string');
    if (values.length === 0) return '';
    return `(${field} ${comp} (${values.map(quoteItem).join(', ')}))`;
  }
  const tuples = ex.values.map((tuple) => {
    const t = tuple as Array<string | string[]>;
    const parts = ex.fields.items.map((field, k) => {
      const v = t[k]!;
      const comp = ex.comps.items[k]!;
      let istr: string;
      if (Array.isArray(v)) istr = `(${v.map(quoteItem).join(', ')})`;
      else istr = isListComp(comp) ? parenItem(v) : quoteItem(v);
      return ` ${field} ${comp} ${istr}`;
    });
    return `(${parts.join(' and ')})`;
  });
  return tuples.length === 0 ? '' : `(${tuples.join(' or ')})`;
}

/** `(<cond>) and not (<e1>) ...` when the rule has exceptions; the condition itself otherwise. */
export function conditionWithExceptions(cond: MappedText, exceptions: readonly ExceptionDef[]): MappedText {
  if (exceptions.length === 0) return cond;
  const end = cond.origin(cond.text.length);
  const parts: Array<MappedText | string> = [MappedText.at('(', cond.origin(0)), cond, ')'];
  for (const ex of exceptions) {
    const text = exceptionText(ex);
    if (text) parts.push(MappedText.at(` and not ${text}`, end));
  }
  return MappedText.concat(parts);
}
