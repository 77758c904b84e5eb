// Every field the four corpus rule files use resolves in the registry: fields found in conditions
// (and exception field lists) twice, by the condition parser (host/engine/parser.ts) and by an
// independent scan for `field[arg] <operator>` at the start of a check, and every `%field` token
// of the rule outputs, matched as a whole by the output-format prefix rule.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { fieldsOf, walk } from '../../host/engine/ast.js';
import { matchFieldPrefix, resolveField, type Source } from '../../host/engine/fields.js';
import { parseCondition } from '../../host/engine/parser.js';
import { corpusText } from '../../support/corpus.js';

const FILES = ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml', 'k8s_audit_rules.yaml'];
const OPERATOR = /^(==|=|!=|<=|<|>=|>|contains|icontains|bcontains|startswith|bstartswith|endswith|glob|iglob|pmatch|intersects|in|exists|regex)/;
const FIELD = /[a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z][a-zA-Z0-9_]*)+(?:\[[^\]\s]*\])?/g;
const OUTPUT_FIELD = /%([a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z][a-zA-Z0-9_]*)+(?:\[[^\]]*\])?)/g;

interface Item {
  condition?: unknown;
  output?: unknown;
  source?: unknown;
  rule?: unknown;
  macro?: unknown;
  exceptions?: Array<{ fields?: unknown }>;
}

/** Conditions of macros and rules with the source that will compile them. */
function scan(file: string): { cond: Map<string, Source>; out: Map<string, Source>; parsed: Map<string, [Source, string, string | undefined]> } {
  const docs = parseAllDocuments(corpusText(file));
  const items = docs.flatMap((d) => (d.toJS() ?? []) as Item[]);
  // Macros carry no source; the file's rules decide it (each corpus file has one source).
  const fileSource = (items.find((i) => i.rule !== undefined && i.source !== undefined)?.source ?? 'syscall') as Source;
  const cond = new Map<string, Source>();
  const out = new Map<string, Source>();
  const parsed = new Map<string, [Source, string, string | undefined]>();
  for (const it of items) {
    const source = (it.source as Source | undefined) ?? fileSource;
    const texts: string[] = [];
    if (typeof it.condition === 'string') texts.push(it.condition);
    for (const e of it.exceptions ?? []) for (const f of ([] as unknown[]).concat(e.fields ?? [])) texts.push(`${String(f)} exists`);
    for (const text of texts) {
      // List names are substituted before parsing in Falco; left in place they parse as values.
      const r = parseCondition(text);
      if (!r.ok) throw new Error(`${file}: ${r.error.message} in ${text}`);
      walk(r.expr, (node) => {
        const operands = node.kind === 'unary' ? [node.left] : node.kind === 'binary' ? [node.left, node.right] : [];
        for (const f of operands.flatMap(fieldsOf)) parsed.set(f.arg === undefined ? f.name : `${f.name}[${f.arg}]`, [source, f.name, f.arg]);
      });
      const blanked = text.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
      for (const m of blanked.matchAll(FIELD)) {
        const before = blanked.slice(0, m.index).trimEnd();
        const after = blanked.slice(m.index! + m[0].length).trimStart();
        if ((before === '' || /(\(|\band|\bor|\bnot)$/.test(before)) && OPERATOR.test(after)) cond.set(m[0], source);
      }
    }
    if (typeof it.output === 'string') for (const m of it.output.matchAll(OUTPUT_FIELD)) out.set(m[1]!, source);
  }
  return { cond, out, parsed };
}

function split(ref: string): [string, string | undefined] {
  const b = ref.indexOf('[');
  return b < 0 ? [ref, undefined] : [ref.slice(0, b), ref.slice(b + 1, -1)];
}

for (const file of FILES) {
  const { cond, out, parsed } = scan(file);

  test(`${file}: the scan finds the fields (sanity)`, () => {
    assert.ok(cond.size >= 20, `only ${cond.size} condition fields found`);
    assert.ok(parsed.size >= cond.size, `parser found ${parsed.size}, scan ${cond.size}`);
    for (const ref of cond.keys()) assert.ok(parsed.has(ref), `the parser missed ${ref}`);
    assert.ok(out.size >= 20, `only ${out.size} output fields found`);
  });

  test(`${file}: every condition field resolves`, () => {
    const bad = [...cond].flatMap(([ref, source]) => {
      const r = resolveField(source, ...split(ref));
      return r.ok ? [] : [`${ref}: ${r.message}`];
    });
    assert.equal(bad, []);
  });

  test(`${file}: every field the parser finds resolves`, () => {
    const bad = [...parsed].flatMap(([ref, [source, name, arg]]) => {
      const r = resolveField(source, name, arg);
      return r.ok ? [] : [`${ref}: ${r.message}`];
    });
    assert.equal(bad, []);
  });

  test(`${file}: every output %field is matched whole`, () => {
    const bad = [...out].flatMap(([ref, source]) => {
      const m = matchFieldPrefix(source, ref);
      return m && m.length === ref.length ? [] : [`${ref}: ${m ? `matched ${m.length} chars` : 'no match'}`];
    });
    assert.equal(bad, []);
  });
}

test('the k8s_audit file uses ka.*/jevt.* fields only, all under the k8s_audit source', () => {
  const { cond, out } = scan('k8s_audit_rules.yaml');
  for (const [ref, source] of [...cond, ...out]) {
    assert.is(source, 'k8s_audit', ref);
    assert.ok(/^(ka|jevt)\./.test(ref), ref);
  }
});

test.run();
