// docs/security.md's limits table cannot drift from the configuration: each row's default is the
// key's default in defaultConfig(), and every limit key of the webhook, forwarder, resources and
// rules sections (a max*, *Timeout*, queue*, *Retries or *HeapMb key) has a row. The fixed bounds
// the page names are checked against their constants. The API's limits live in security-api.md.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultConfig } from '../../host/config/config.js';
import { HARD_MAX_DEPTH } from '../../host/engine/parser.js';
import { REGEX_HARD_LIMITS } from '../../host/engine/regex-syntax.js';
import { MAX_RECORD } from '../../host/abi/records.js';

const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
const limitsSection = doc.slice(doc.indexOf('## Limits'), doc.indexOf('## Faults'));
/** key -> default as written, from the rows "| `key` | `default` | ... |". */
const rows = new Map([...limitsSection.matchAll(/^\| `([a-zA-Z.]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1]!, m[2]!]));
const config = defaultConfig({}) as unknown as Record<string, Record<string, unknown>>;
const LIMIT_KEY = /^(max[A-Z]|queue|.*Timeout|.*Retries$|.*HeapMb$)/;

test("security.md: every row of the limits table shows the key's default", () => {
  assert.ok(rows.size >= 20, `${rows.size} rows`);
  for (const [key, shown] of rows) {
    const [section, name] = key.split('.') as [string, string];
    assert.ok(section in config && name in config[section]!, `${key} is not a configuration key`);
    assert.is(shown, String(config[section]![name]), `${key}: the table says ${shown}`);
  }
});

test('security.md: every limit key of the webhook, forwarder, resources and rules sections has a row', () => {
  for (const section of ['webhook', 'forwarder', 'resources', 'rules']) {
    for (const name of Object.keys(config[section]!).filter((k) => LIMIT_KEY.test(k))) assert.ok(rows.has(`${section}.${name}`), `${section}.${name} has no row in docs/security.md`);
  }
});

test("security.md: the fixed bounds are the code's", () => {
  const fixed = doc.slice(doc.indexOf('Fixed bounds'), doc.indexOf('## Faults'));
  for (const [n, what] of [[MAX_RECORD, 'kernel record']] as const) {
    assert.match(fixed, `\`${n}\``, `${what} ${n}`);
  }
});

test("security.md: the ceilings of the rules.* keys are the code's", () => {
  for (const [key, n] of [
    ['rules.maxConditionDepth', HARD_MAX_DEPTH],
    ['rules.maxRegexRepeat', REGEX_HARD_LIMITS.maxRepeat],
    ['rules.maxRegexAtoms', REGEX_HARD_LIMITS.maxSize],
    ['rules.maxRegexNesting', REGEX_HARD_LIMITS.maxDepth],
  ] as const) {
    const row = limitsSection.split('\n').find((l) => l.startsWith(`| \`${key}\``));
    assert.ok(row?.includes(`at most \`${n}\``), `${key}: ceiling ${n}`);
  }
});

test.run();
