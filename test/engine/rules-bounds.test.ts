// Load bounds as configuration (rules.maxRules, rules.maxListItems, rules.maxConditionBytes,
// rules.maxOutputBytes, rules.maxConditionDepth, rules.maxGlobBytes, rules.maxRegex*;
// host/engine/rules-bounds.ts, the checker): past each, the load is invalid with one error located at the
// first item over the bound, whatever path loads it (the configuration reaches loadRules through
// expandLimitsOf, as `rae run`, its reloads and the engine use it). At the bound it loads.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig } from '../../host/config/config.js';
import { expandLimitsOf } from '../../host/cli/run-config.js';
import { loadRules } from '../../host/engine/index.js';
import { headlines } from './helpers.js';

const COND = 'evt.type = open and proc.name = cat';
const N = Buffer.byteLength(COND);
const RULE = (name: string, cond = COND, output = 'o') => `- rule: ${name}\n  desc: d\n  condition: ${cond}\n  output: ${output}\n  priority: INFO\n`;
const load = (text: string, patch: Partial<ReturnType<typeof defaultConfig>['rules']>) => {
  const config = defaultConfig({});
  config.rules = { ...config.rules, ...patch };
  return loadRules([{ name: 'rules.yaml', text }], { suggestedOutput: false, limits: expandLimitsOf(config) });
};
const C = 'rules.yaml:3:14: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): ';
const V = 'error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects)';

type Case = [name: string, text: string, patch: Partial<ReturnType<typeof defaultConfig>['rules']>, headline: string | undefined];
const THREE = RULE('a') + RULE('b') + RULE('c');
const LIST = '- list: shells\n  items: [sh, bash]\n- list: shells\n  append: true\n  items: [zsh]\n';
const cases: Case[] = [
  ['three rules, maxRules 3', THREE, { maxRules: 3 }, undefined],
  ['three rules, maxRules 2', THREE, { maxRules: 2 }, `rules.yaml:11:3: ${V}: more than rules.maxRules=2 rules (3); rule 'c' is past the bound`],
  ['a list of 3 items (an append), maxListItems 3', LIST + RULE('r', 'proc.name in (shells)'), { maxListItems: 3 }, undefined],
  ['a list of 3 items (an append), maxListItems 2', LIST + RULE('r', 'proc.name in (shells)'), { maxListItems: 2 }, `rules.yaml:1:3: ${V}: list 'shells' has 3 items, more than rules.maxListItems=2`],
  [`a ${N}-byte condition, maxConditionBytes ${N}`, RULE('a'), { maxConditionBytes: N }, undefined],
  [`a ${N}-byte condition, maxConditionBytes ${N - 1}`, RULE('a'), { maxConditionBytes: N - 1 }, `rules.yaml:3:14: ${V}: condition of 'a' is ${N} bytes, longer than rules.maxConditionBytes=${N - 1}`],
  ['a 13-byte output, maxOutputBytes 13', RULE('a', COND, 'file %fd.name'), { maxOutputBytes: 13 }, undefined],
  ['a 13-byte output, maxOutputBytes 12', RULE('a', COND, 'file %fd.name'), { maxOutputBytes: 12 }, `rules.yaml:4:11: ${V}: output of 'a' is 13 bytes, longer than rules.maxOutputBytes=12`],
  // libsinsp's guard counts each level of the grammar it enters: this condition reaches 17
  ['two parentheses, maxConditionDepth 18', RULE('a', '((evt.type = open))'), { maxConditionDepth: 18 }, undefined],
  ['two parentheses, maxConditionDepth 17', RULE('a', '((evt.type = open))'), { maxConditionDepth: 17 }, `rules.yaml:3:27: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): exceeded max depth limit of 17`],
  ['a 6-byte glob, maxGlobBytes 6', RULE('a', 'fd.name glob "/usr/*"'), { maxGlobBytes: 6 }, undefined],
  ['a 6-byte glob, maxGlobBytes 5', RULE('a', 'fd.name glob "/usr/*"'), { maxGlobBytes: 5 }, `${C}glob pattern is 6 bytes, longer than rules.maxGlobBytes=5`],
  ['a pmatch pattern of 4 bytes, maxGlobBytes 3', RULE('a', 'fd.name pmatch (/usr, /etc)'), { maxGlobBytes: 3 }, `${C}pmatch pattern is 4 bytes, longer than rules.maxGlobBytes=3`],
  ['a{5}, maxRegexRepeat 5', RULE('a', 'proc.name regex "a{5}"'), { maxRegexRepeat: 5 }, undefined],
  ['a{5}, maxRegexRepeat 4', RULE('a', 'proc.name regex "a{5}"'), { maxRegexRepeat: 4 }, `${C}invalid regex pattern: a{5}: repetition count above 4 (rules.maxRegexRepeat, RE2's limit) (at offset 1 of the pattern)`],
  ['5 atoms, maxRegexAtoms 5', RULE('a', 'proc.name regex "abcde"'), { maxRegexAtoms: 5 }, undefined],
  [
    '5 atoms, maxRegexAtoms 4',
    RULE('a', 'proc.name regex "abcde"'),
    { maxRegexAtoms: 4 },
    `${C}invalid regex pattern: abcde: pattern too large: 5 atoms once repetitions are expanded (at most rules.maxRegexAtoms=4) (at offset 0 of the pattern)`,
  ],
  ['groups nested 2 deep, maxRegexNesting 2', RULE('a', 'proc.name regex "((a))"'), { maxRegexNesting: 2 }, undefined],
  ['groups nested 2 deep, maxRegexNesting 1', RULE('a', 'proc.name regex "((a))"'), { maxRegexNesting: 1 }, `${C}invalid regex pattern: ((a)): groups nested deeper than 1 (rules.maxRegexNesting) (at offset 1 of the pattern)`],
];

for (const [name, text, patch, headline] of cases) {
  test(`rules bounds: ${name}`, () => {
    const r = load(text, patch);
    if (headline === undefined) assert.ok(r.ok, headlines(r).join('\n'));
    else {
      assert.not.ok(r.ok);
      assert.equal(
        headlines(r).filter((h) => h.includes('rules.max') || h.includes('max depth')),
        [headline],
      );
    }
  });
}

test('rules bounds: the defaults admit the corpus-sized loads and are in the configuration', () => {
  const c = defaultConfig({});
  assert.equal([c.rules.maxRules, c.rules.maxListItems, c.rules.maxConditionBytes], [10_000, 100_000, 1024 * 1024]);
  assert.ok(load(THREE, {}).ok);
});

test.run();
