// The SIGHUP reload's view of a configuration change: which dotted keys differ (lists compare
// whole), and which of them a reload applies live (the rest are logged as needing a restart).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { changedKeys, RELOADABLE } from '../../host/cli/reload.js';
import { configFromYaml } from '../../host/config/config.js';

const config = (yaml: string) => configFromYaml(yaml, { RAE_STATE_DIR: '/tmp/rae-state' }).config;

test('reload: changed keys of two configurations, and which take a restart', () => {
  const cases: Array<[string, string, string[]]> = [
    ['', '', []],
    ['rules:\n  files: [a.yaml]\n', 'rules:\n  files: [a.yaml, b.yaml]\n', ['rules.files']],
    ['', 'rules:\n  builtIn: [syscall]\n  minPriority: Warning\n', ['rules.builtIn', 'rules.minPriority']],
    ['', 'webhook:\n  port: 1\n  drainTimeoutSeconds: 5\napi:\n  enabled: false\n', ['api.enabled', 'webhook.drainTimeoutSeconds', 'webhook.port']],
    ['', 'hostname: n1\n', ['hostname']],
  ];
  for (const [a, b, want] of cases) assert.equal(changedKeys(config(a), config(b)), want, `${a} -> ${b}`);
  assert.equal(RELOADABLE, ['rules.builtIn', 'rules.files', 'rules.disableTags', 'rules.enableTags', 'rules.disableNames']);
  assert.equal(changedKeys(config(''), config('rules:\n  disableTags: [shell]\n')), ['rules.disableTags']);
});

test.run();
