// The "2 KiB manifest that kills the engine" of issue 19 (item 3): macros m0..m{n-1}, each but
// the first using the one before it twice, and a rule on the last, so the rule's condition
// expands to about 8·2^n nodes. As a rules file and as an EngineAuditRules manifest.

/** The macro items as [name, condition]; m0 is `evt.type = open`. */
function macros(n: number): Array<[string, string]> {
  const out: Array<[string, string]> = [['m0', 'evt.type = open']];
  for (let i = 1; i < n; i++) out.push([`m${i}`, `(m${i - 1} and proc.name = a${i}) or (m${i - 1} and proc.name = b${i})`]);
  return out;
}

/** A Falco rules file: the n macros and the rule `Macro bomb` on m{n-1}. */
export function macroBombRules(n: number): string {
  const items = macros(n).map(([name, cond]) => `- macro: ${name}\n  condition: ${cond}\n`);
  items.push(`- rule: Macro bomb\n  desc: d\n  condition: m${n - 1}\n  output: bomb %proc.name\n  priority: WARNING\n`);
  return items.join('');
}

/** The same as an EngineAuditRules manifest named `name` (apiVersion deckhouse.io/v1alpha1). */
export function macroBombManifest(n: number, name: string): string {
  const items = macros(n).map(([m, cond]) => `    - macro:\n        name: ${m}\n        condition: ${cond}\n`);
  items.push(`    - rule:\n        name: Macro bomb\n        desc: d\n        condition: m${n - 1}\n        output: bomb %proc.name\n        priority: Warning\n`);
  return `apiVersion: deckhouse.io/v1alpha1\nkind: EngineAuditRules\nmetadata:\n  name: ${name}\nspec:\n  rules:\n${items.join('')}`;
}

/** 1-based line and column of the `nth` (0-based) occurrence of `needle` on the line that contains `after`. */
export function positionOf(text: string, after: string, needle: string, nth = 0): { line: number; column: number } {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.includes(after));
  let col = -1;
  for (let i = 0; i <= nth; i++) col = lines[line]!.indexOf(needle, col + 1);
  return { line: line + 1, column: col + 1 };
}
