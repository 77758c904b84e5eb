// Fuzz of the rules reader and collector (and the stages behind them) with random YAML shapes:
// documents of random JSON/YAML values, rules files whose items have the right kind key but a
// wrong type at every other key, and text cut at random points. Whatever the input, loading
// never throws (rae validate never exits 70) and every diagnostic is located in a loaded file
// and renders in both forms. Fixed seed, bounded runs.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { diagnosticJson, renderDiagnostic } from '../../host/engine/diagnostics.js';
import { loadRules, type RulesFile } from '../../host/engine/index.js';

const SEED = Number(process.env.RULES_FUZZ_SEED ?? 20261125);

const KEYS: Record<string, readonly string[]> = {
  list: ['items', 'append', 'override'],
  macro: ['condition', 'append', 'override'],
  rule: ['condition', 'output', 'desc', 'priority', 'source', 'enabled', 'tags', 'exceptions', 'warn_evttypes', 'skip-if-unknown-filter', 'capture', 'capture_duration', 'append', 'override'],
  required_engine_version: [],
  required_plugin_versions: [],
};
const EXCEPTION_KEYS = ['name', 'fields', 'comps', 'values'];

/** Plausible scalars: names that exist, operators, conditions, priorities, and edge strings. */
const word = fc.constantFrom(
  'r',
  'm',
  'l',
  'shell_binaries',
  'proc.name',
  'fd.name',
  'evt.type',
  'not.exist',
  'tolower(proc.name)',
  '=',
  'in',
  'startswith oneof',
  ' = ',
  'regex',
  'evt.type = open',
  'and proc.name = cat',
  'proc.name in (l)',
  'm and l',
  'INFO',
  'Warning',
  'nope',
  'syscall',
  'k8s_audit',
  'append',
  'replace',
  'o %proc.name',
  '%evt.dir',
  '',
  ' ',
  'a{1,3}',
  '(a, b)',
  '"q"',
  '0.26.0',
  '26',
  'seven',
);
const scalar = fc.oneof(word, fc.string({ maxLength: 12 }), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null));
/** Any JSON value, a few levels deep. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(word, tie('value'), { maxKeys: 4 })),
})).value;
/** A value of the usual shape for a key, or any value (the wrong type). */
const valueFor = (key: string): fc.Arbitrary<unknown> => {
  const usual: Record<string, fc.Arbitrary<unknown>> = {
    items: fc.array(fc.oneof(word, anyValue), { maxLength: 4 }),
    tags: fc.array(word, { maxLength: 3 }),
    override: fc.dictionary(fc.constantFrom('items', 'condition', 'output', 'desc', 'priority', 'tags', 'exceptions', 'enabled', 'source'), fc.constantFrom('append', 'replace', 'nope')),
    exceptions: fc.array(fc.oneof(fc.record(Object.fromEntries(EXCEPTION_KEYS.map((k) => [k, fc.oneof(word, fc.array(fc.oneof(word, fc.array(word, { maxLength: 3 })), { maxLength: 3 }), anyValue)])), { requiredKeys: [] }), anyValue), {
      maxLength: 3,
    }),
  };
  return fc.oneof(usual[key] ?? word, anyValue);
};
/** An item with a kind key and a random subset of that kind's keys, each with a plausible or wrong value. */
const item = fc.constantFrom(...Object.keys(KEYS)).chain((kind) =>
  fc
    .tuple(
      fc.oneof(word, anyValue),
      fc.subarray([...KEYS[kind]!]).chain((keys) => fc.tuple(...keys.map((k) => valueFor(k).map((v) => [k, v] as const)))),
    )
    .map(([name, pairs]) => Object.fromEntries([[kind, name], ...pairs])),
);
const ruleName = fc.oneof({ weight: 6, arbitrary: fc.constant('r') }, { weight: 1, arbitrary: word });
/** Exceptions of the usual shape with random counts: fields, comps and value tuples whose lengths may disagree. */
const exceptions = fc.array(
  fc.record(
    {
      name: fc.constantFrom('e1', 'e2'),
      fields: fc.oneof(fc.array(fc.constantFrom('proc.name', 'fd.name', 'not.exist', 'tolower(proc.name)'), { maxLength: 3 }), fc.constantFrom('proc.name', 'fd.name')),
      comps: fc.oneof(fc.array(fc.constantFrom('=', ' = ', 'startswith', 'in', 'regex', 'nope'), { maxLength: 3 }), fc.constantFrom('in', 'pmatch', 'regex oneof')),
      values: fc.array(fc.oneof(word, fc.array(fc.oneof(word, fc.array(word, { maxLength: 2 })), { maxLength: 3 })), { maxLength: 3 }),
    },
    { requiredKeys: ['name'] },
  ),
  { maxLength: 2 },
);
/** Exceptions that usually pass validation at definition: one or two known fields, default comps, tuples of one or two values. */
const plainExceptions = fc.array(
  fc.record({
    name: fc.constantFrom('e1', 'e2'),
    fields: fc.array(fc.constantFrom('proc.name', 'fd.name'), { minLength: 1, maxLength: 2 }),
    values: fc.array(fc.array(word, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 2 }),
  }),
  { minLength: 1, maxLength: 2 },
);
/** The value or, three times out of four, nothing. */
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
/** Values appended to an existing exception: a name and value tuples of any length. */
const appendedValues = fc.array(fc.record({ name: fc.constantFrom('e1', 'e2'), values: fc.array(fc.oneof(word, fc.array(word, { maxLength: 3 })), { minLength: 1, maxLength: 2 }) }), { minLength: 1, maxLength: 2 });
/** A complete rule definition (so that later items have something to append to). */
const baseRule = fc.record({
  rule: ruleName,
  desc: word,
  condition: fc.constantFrom('evt.type = open', 'evt.type in (open, openat) and m', 'proc.name in (l)', 'evt.type = open and proc.nah = 1'),
  output: fc.constantFrom('o %proc.name', 'o %evt.dir', 'o %nope'),
  priority: fc.constantFrom('INFO', 'Warning', 'nope'),
  exceptions: fc.oneof({ weight: 3, arbitrary: plainExceptions }, { weight: 1, arbitrary: exceptions }),
});
/** An append to a rule: the deprecated flag or an override, with a condition and/or exceptions. */
const appendRule = fc
  .tuple(ruleName, maybe(fc.constantFrom('and proc.name = cat', 'and proc.nope = 1')), fc.oneof(appendedValues, plainExceptions, exceptions), fc.boolean(), maybe(fc.constantFrom('', 'syscall', 'k8s_audit')))
  .map(([rule, condition, exs, flag, source]) => {
    const out: Record<string, unknown> = { rule, exceptions: exs };
    if (condition !== undefined) out.condition = condition;
    if (source !== undefined) out.source = source;
    if (flag) out.append = true;
    else out.override = { exceptions: 'append', ...(condition === undefined ? {} : { condition: 'append' }) };
    return out;
  });
const listOrMacro = fc.oneof(fc.record({ list: fc.constantFrom('l', 'k'), items: fc.array(fc.oneof(word, anyValue), { maxLength: 3 }) }), fc.record({ macro: fc.constantFrom('m', 'n'), condition: fc.oneof(word, anyValue) }));
const document = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.oneof({ weight: 3, arbitrary: item }, baseRule, appendRule, listOrMacro, anyValue), { maxLength: 6 }) },
  // A definition followed by appends to it, the sequence that reaches the exception and condition merging.
  { weight: 3, arbitrary: fc.tuple(baseRule, fc.array(appendRule, { minLength: 1, maxLength: 3 })).map(([b, as]) => [b, ...as]) },
  { weight: 1, arbitrary: anyValue },
);
/** A rules file: one or more YAML documents, sometimes cut short at a random point. */
const fileText = fc.tuple(fc.array(document, { minLength: 1, maxLength: 2 }), fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() })).map(([docs, cut]) => {
  const text = docs.map((d) => stringify(d)).join('---\n');
  return cut === undefined ? text : text.slice(0, cut % (text.length + 1));
});

function checkLoad(files: RulesFile[]): void {
  const names = new Set(files.map((f) => f.name));
  const result = loadRules(files);
  assert.is(result.files.length, files.length);
  for (const d of result.diagnostics) {
    assert.ok(d.locations.length > 0, `${d.code} has a location`);
    for (const loc of d.locations) {
      assert.ok(names.has(loc.position.name), `${d.code} is located in a loaded file: ${loc.position.name}`);
      assert.ok(loc.position.line >= 1 && loc.position.column >= 1, `${d.code} has a line and a column`);
    }
    assert.ok(renderDiagnostic(d, result.sources).length > 0);
    assert.ok(diagnosticJson(d, result.sources).context.locations.length > 0);
  }
  const reported = result.files.flatMap((f) => [...f.errors, ...f.warnings]);
  assert.is(reported.length, result.diagnostics.length, 'every diagnostic is reported by exactly one file');
  assert.is(
    result.ok,
    result.files.every((f) => f.successful),
  );
}

test('random YAML shapes: one file never throws and every diagnostic is located', () => {
  fc.assert(
    fc.property(fileText, (text) => checkLoad([{ name: 'fuzz.yaml', text }])),
    { numRuns: 400, seed: SEED },
  );
});

test('random YAML shapes: several files appending to each other never throw', () => {
  fc.assert(
    fc.property(fc.array(fileText, { minLength: 2, maxLength: 3 }), (texts) => checkLoad(texts.map((text, i) => ({ name: `f${i}.yaml`, text })))),
    { numRuns: 150, seed: SEED + 1 },
  );
});

test.run();
