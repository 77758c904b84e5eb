// Lists: one-level list-in-list resolution and Falco's textual substitution of list names into
// condition strings before parsing (reference/falco-language.md B.5,
// falco:userspace/engine/rule_loader_compiler.cpp resolve_list / compile_list_infos).
import type { ListDef } from './collector.js';
import { MappedText } from './mapped-text.js';

/** A list with its items resolved, and whether any condition or list used it. */
export interface CompiledList {
  name: string;
  items: string[];
  def: ListDef;
  used: boolean;
}

/** Resolves list items naming an earlier-visible list to that list's raw items (one level only). */
export function compileLists(defs: ListDef[]): CompiledList[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  const out = defs.map((d): CompiledList => ({ name: d.name, items: [], def: d, used: false }));
  const usedNames = new Set<string>();
  defs.forEach((d, i) => {
    for (const item of d.items) {
      const ref = byName.get(item);
      if (ref && ref.index < d.visibility) {
        usedNames.add(ref.name);
        out[i]!.items.push(...ref.items);
      } else {
        out[i]!.items.push(item);
      }
    }
  });
  for (const l of out) if (usedNames.has(l.name)) l.used = true;
  return out;
}

/** Falco's quote_item: wrap in double quotes when the item has a space and is not already quoted. */
export function quoteItem(e: string): string {
  return e.includes(' ') && e[0] !== '"' && e[0] !== "'" ? `"${e}"` : e;
}

const BLANKS = ' \t\n\r';
const DELIMS = `${BLANKS}(),=`;

/**
 * Substitutes every list, in definition order, into a condition text exactly as Falco's
 * resolve_list does (delimiters, blank consumption, empty-list comma removal), keeping origins:
 * substituted items map to the list name's occurrence. Marks the lists it used.
 */
export function substituteLists(cond: MappedText, lists: readonly CompiledList[]): MappedText {
  let cnd = cond;
  for (const list of lists) {
    const next = substituteOne(cnd, list);
    if (next !== cnd) {
      list.used = true;
      cnd = next;
    }
  }
  return cnd;
}

function substituteOne(input: MappedText, list: CompiledList): MappedText {
  let cnd = input;
  let text = cnd.text;
  let start = text.indexOf(list.name);
  while (start !== -1) {
    let end = start + list.name.length;
    if ((start === 0 || DELIMS.includes(text[start - 1]!)) && (end >= text.length || DELIMS.includes(text[end]!))) {
      const at = cnd.origin(start);
      while (start > 0 && BLANKS.includes(text[start - 1]!)) start--;
      while (end < text.length && BLANKS.includes(text[end]!)) end++;
      const sub = list.items.map(quoteItem).join(', ');
      if (sub === '') {
        if (start > 0 && text[start - 1] === ',') start--;
        else if (end < text.length && text[end] === ',') end++;
      }
      const parts: Array<MappedText | string> = [];
      if (start > 0) parts.push(cnd.slice(0, start), ' ');
      parts.push(MappedText.at(sub, at), ' ');
      parts.push(cnd.slice(Math.min(end, text.length)));
      cnd = MappedText.concat(parts);
      text = cnd.text;
      start += sub.length + 1;
    }
    start = text.indexOf(list.name, start + 1);
  }
  return cnd;
}
