// rules.watch (Falco's watch_config_files) in a real `rae run`: a rules file rewritten in place,
// a file added to a watched directory and a ConfigMap-style `..data` symlink swap each go live
// without a signal; an invalid change is refused with its located error and the running rules
// stay. Each step is checked by an audit event posted to the webhook and the alert it raises.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_VERSION } from '../../host/engine/collector.js';
import { auditEvent } from '../../host/generator/audit-events.js';
import { auditPoster, webhookClient } from '../../host/generator/post.js';
import { startRae } from '../helpers/rae-run.js';

const root = mkdtempSync(join(tmpdir(), 'rae-rules-watch-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

/** An audit rule named `name` on events whose target is `target`. */
const rule = (name: string, target: string) => `- rule: ${name}\n  desc: the watch test\n  condition: ka.target.name = "${target}"\n  output: ${name} saw %ka.target.name\n  priority: Notice\n  source: k8s_audit\n`;

test('rules.watch: in-place rewrite, a file added to a directory and a ..data swap go live; an invalid change is refused', async () => {
  const file = join(root, 'plain.yaml');
  writeFileSync(file, rule('Watch plain v1', 'plain'));
  const dir = join(root, 'rules.d');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.yaml'), rule('Watch dir a', 'dir-a'));
  // A ConfigMap volume: cm/rules.yaml -> ..data/rules.yaml, ..data -> ..2026_01_01_v1.
  const cm = join(root, 'cm');
  mkdirSync(join(cm, '..2026_01_01_v1'), { recursive: true });
  writeFileSync(join(cm, '..2026_01_01_v1', 'rules.yaml'), rule('Watch cm v1', 'cm'));
  symlinkSync('..2026_01_01_v1', join(cm, '..data'));
  symlinkSync('..data/rules.yaml', join(cm, 'rules.yaml'));

  const state = join(root, 'state');
  const rae = startRae(['-r', file, '-r', dir, '-r', cm, '--state-dir', state, '-o', 'rules.builtIn=[]', '-o', 'forwarder.port=0', '-o', 'api.enabled=false', '-o', 'webhook.port=0']);
  try {
    await rae.waitLog(/run: ready/);
    const url = (await rae.waitLog(/run: webhook listening on (\S+)/))[1]!;
    const post = auditPoster(url, webhookClient(join(state, 'webhook-tls')), 300_000);
    const alerted = async (target: string, rule: string) => {
      await post([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: target })]);
      await rae.waitAlerts((a) => a.some((x) => x.rule === rule && x.output_fields['ka.target.name'] === target), `${rule} on ${target}`, 300_000);
    };
    await alerted('plain', 'Watch plain v1');
    await alerted('cm', 'Watch cm v1');
    // The version and every loaded rules file's sha256 as metrics (Falco's version_info and sha256_rules_files_info).
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    const metrics = async () => (await fetch(`${forwarder}/metrics`)).text();
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.match(await metrics(), `enginesecurity_engine_version_info{version="${pkg.version}",engine_version="${ENGINE_VERSION}"} 1`);
    assert.match(await metrics(), `enginesecurity_engine_rules_files_info{file_name="${file}",sha256="${sha(file)}"} 1`);

    let mark = rae.stderr().length;
    writeFileSync(file, rule('Watch plain v2', 'plain'));
    await rae.waitLog(/run: reload done in \d+ ms: the new ruleset is live/, mark);
    assert.match(rae.stderr().slice(mark), 'run: a rules file changed, reloading');
    await alerted('plain', 'Watch plain v2');
    assert.match(await metrics(), `enginesecurity_engine_rules_files_info{file_name="${file}",sha256="${sha(file)}"} 1`);

    mark = rae.stderr().length;
    writeFileSync(join(dir, 'b.yaml'), rule('Watch dir b', 'dir-b'));
    await rae.waitLog(/run: reload done in \d+ ms: the new ruleset is live/, mark);
    await alerted('dir-b', 'Watch dir b');

    mark = rae.stderr().length;
    mkdirSync(join(cm, '..2026_01_02_v2'));
    writeFileSync(join(cm, '..2026_01_02_v2', 'rules.yaml'), rule('Watch cm v2', 'cm'));
    symlinkSync('..2026_01_02_v2', join(cm, '..data_tmp'));
    renameSync(join(cm, '..data_tmp'), join(cm, '..data'));
    await rae.waitLog(/run: reload done in \d+ ms: the new ruleset is live/, mark);
    await alerted('cm', 'Watch cm v2');

    mark = rae.stderr().length;
    writeFileSync(file, rule('Watch plain v3', 'plain').replace('ka.target.name =', 'ka.target.nmae ='));
    await rae.waitLog(/run: reload refused/, mark);
    assert.match(rae.stderr().slice(mark), `${file}:3:`);
    await alerted('plain', 'Watch plain v2');
  } finally {
    await rae.stop();
  }
});

test.run();
