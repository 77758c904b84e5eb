// Load bounds as configuration (rules.maxRules, rules.maxListItems, rules.maxConditionBytes;
// host/engine/rules-bounds.ts): past each, the load is invalid with one error located at the
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
const RULE = (name: string, cond = COND) => `- rule: ${name}\n  desc: d\n  condition: ${cond}\n  output: o\n  priority: INFO\n`;
const load = (text: string, patch: Partial<ReturnType<typeof defaultConfig>['rules']>) => {
  const config = defaultConfig({});
  config.rules = { ...config.rules, ...patch };
  return loadRules([{ name: 'rules.yaml', text }], { suggestedOutput: false, limits: expandLimitsOf(config) });
};
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
];

for (const [name, text, patch, headline] of cases) {
  test(`rules bounds: ${name}`, () => {
    const r = load(text, patch);
    if (headline === undefined) assert.ok(r.ok, headlines(r).join('\n'));
    else {
      assert.not.ok(r.ok);
      assert.equal(
        headlines(r).filter((h) => h.includes('rules.max')),
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
