// Bounded macro expansion (issue 19, item 3): a condition whose expanded tree passes the node or
// depth limit is a located RAE_ERR_EXPANSION_LIMIT at the reference that passes it, found on the
// shared (DAG) form before any later stage walks the tree; the other rules load.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { printExpr } from '../../host/engine/printer.js';
import { macroBombRules, positionOf } from '../helpers/macro-bomb.js';
import { loadRules, type ExpandLimits } from '../../host/engine/index.js';
import { errors, headlines, load } from './helpers.js';

const loadWith = (text: string, limits: Partial<ExpandLimits>) => loadRules([{ name: 'rules.yaml', text }], { suggestedOutput: false, limits });

const RULE = (name: string, cond: string) => `- rule: ${name}\n  desc: d\n  condition: ${cond}\n  output: o\n  priority: INFO\n`;
const PLAIN = RULE('plain', 'evt.type = open and proc.name = cat');

test('budget: 14 macros each using the previous one twice are rejected where the limit is passed; the other rule loads', () => {
  // m12 expands to 32,761 nodes, m13 (two m12) to 65,529: over the default 50,000 at its second m12.
  const text = macroBombRules(14) + PLAIN;
  const r = load(text);
  const at = positionOf(text, 'condition: (m12 and', 'm12', 1);
  const decl = positionOf(text, '- macro: m13', 'm13');
  assert.is(r.ok, false);
  assert.equal(errors(r)[0]!.split('\n'), [
    `rules.yaml:${at.line}:${at.column}: error RAE_ERR_EXPANSION_LIMIT (Expanded condition exceeds a size or depth limit): condition too large: it expands to 65529 nodes, over the limit of 50000 (macro 'm12' here expands to 32761 nodes, 37 levels deep)`,
    '    In rules content: (rules.yaml:1:1)',
    `    macro 'm13': (rules.yaml:${decl.line}:3)`,
    `    macro condition: (rules.yaml:${at.line}:14)`,
    `    condition expression '(m12 and proc.name =': (rules.yaml:${at.line}:${at.column})`,
    `  ${at.line} |   condition: (m12 and proc.name = a13) or (m12 and proc.name = b13)`,
    '     |                                            ^',
  ]);
  const rule = positionOf(text, 'condition: m13', 'm13');
  assert.equal(headlines(r).slice(1), [`rules.yaml:${rule.line}:${rule.column}: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Macro 'm13' has an invalid condition`]);
  assert.equal(
    r.ruleset.rules.map((x) => x.name),
    ['plain'],
  );
});

test('budget: the node limits are load options; the total counts every rule of the load', () => {
  const bomb = loadWith(macroBombRules(14), { maxNodes: 100_000 });
  assert.equal(errors(bomb), []);
  assert.equal(
    bomb.ruleset.rules.map((x) => x.name),
    ['Macro bomb'],
  );

  // Each rule is 1 (and) + 1 (evt.type check) + 1 + 4 (a check on a list of four) = 7 nodes.
  const rule = (name: string) => RULE(name, 'evt.type = open and proc.name in (a, b, c, d)');
  const text = rule('r1') + rule('r2') + rule('r3');
  const r = loadWith(text, { maxTotalNodes: 20 });
  const at = positionOf(text, '- rule: r3', 'r3');
  assert.equal(headlines(r), [
    `rules.yaml:${at.line + 2}:14: error RAE_ERR_EXPANSION_LIMIT (Expanded condition exceeds a size or depth limit): the rules loaded so far and this one (7 nodes) expand to more than the limit of 20 nodes together; this rule is left out`,
  ]);
  assert.equal(
    r.ruleset.rules.map((x) => x.name),
    ['r1', 'r2'],
  );
  assert.equal(headlines(loadWith(text, { maxNodes: 7 })), []);
  assert.equal(headlines(loadWith(text, { maxNodes: 6 })).length, 3);
});

test('budget: a chain of 600 macros nests past 1,000 levels and is rejected at the macro that passes it', () => {
  // m_i = (m_{i-1} and ...) is 2i + 1 levels deep: m500 is the first past 1,000.
  const items = ['- macro: m0\n  condition: evt.type = open\n'];
  for (let i = 1; i < 600; i++) items.push(`- macro: m${i}\n  condition: (m${i - 1} and proc.name != a${i})\n`);
  const text = items.join('') + RULE('chain', 'm599') + PLAIN;
  const r = load(text);
  const at = positionOf(text, 'condition: (m499 and', 'm499');
  assert.is(
    headlines(r)[0],
    `rules.yaml:${at.line}:${at.column}: error RAE_ERR_EXPANSION_LIMIT (Expanded condition exceeds a size or depth limit): condition too deep: it nests 1001 levels once expanded, over the limit of 1000 (macro 'm499' here expands to 1498 nodes, 999 levels deep)`,
  );
  assert.equal(
    r.ruleset.rules.map((x) => x.name),
    ['plain'],
  );
});

test('budget: macros seen through later redefinitions are resolved once, not copied per reference', () => {
  // Every m_i is redefined at the end to use m_{i+1} twice: m0 sees them all still unresolved.
  const doubling = (n: number) => {
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(`- macro: m${i}\n  condition: proc.name = z${i}\n`);
    for (let i = 0; i < n - 1; i++) items.push(`- macro: m${i}\n  condition: (m${i + 1} and proc.name = a${i}) or (m${i + 1} and proc.name = b${i})\n`);
    return items.join('') + RULE('deep', 'evt.type = open and m0');
  };
  const small = load(doubling(3));
  assert.equal(
    small.ruleset.rules.map((x) => printExpr(x.expanded)),
    ['(evt.type = open and ((((proc.name = z2 and proc.name = a1) or (proc.name = z2 and proc.name = b1)) and proc.name = a0) or (((proc.name = z2 and proc.name = a1) or (proc.name = z2 and proc.name = b1)) and proc.name = b0)))'],
  );
  const text = doubling(14);
  const big = load(text);
  const at = positionOf(text, 'condition: (m1 and', 'm1', 1);
  assert.match(headlines(big)[0]!, `rules.yaml:${at.line}:${at.column}: error RAE_ERR_EXPANSION_LIMIT`);
  assert.equal(big.ruleset.rules, []);
});

test('budget: event types of a macro shared under both polarities', () => {
  const r = load(`- macro: t\n  condition: evt.type in (open, openat)\n${RULE('both', '(t and proc.name = a) or (not t and evt.type = execve)')}${RULE('negated', 'not t and evt.type in (open, execve)')}`);
  const types = (name: string) => [...r.ruleset.rules.find((x) => x.name === name)!.evttypes!].sort();
  assert.equal(types('both'), ['execve', 'open', 'openat']);
  assert.equal(types('negated'), ['execve']);
});

test.run();
