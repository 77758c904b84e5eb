// The engine image, built for real by scripts/build-image.sh from bases made on this machine (no
// registry), then run with podman: `rae --version` and `--help` answer, the default command is
// `rae run`, the converter and the event generator run from the same image, the probe addon loads
// (its libraries came from the build stage), and the final stage holds no compiler, npm or
// devDependency.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readManifests } from '../../host/resources/manifests.js';
import { buildTestImage, imageToolsMissing, type TestImage } from '../../support/image.js';

const missing = imageToolsMissing();
if (missing) process.stderr.write(`\n*** SKIPPED: the image tests: ${missing} ***\n`);
const t = missing ? test.skip : test;
const version = (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

let image: TestImage | undefined;
const img = (): TestImage => {
  image ??= buildTestImage();
  return image;
};
test.after(() => image?.close());

t('the image builds offline and answers rae --version and --help', () => {
  const v = img().run(['--version']);
  assert.is(v.code, 0, v.stderr);
  assert.match(v.stdout, new RegExp(`^runtime-audit-engine version: ${version.replace(/\./g, '\\.')}$`, 'm'));
  const h = img().run(['--help']);
  assert.is(h.code, 0, h.stderr);
  for (const cmd of ['run', 'convert', 'event-generator', 'webhook-config']) assert.match(h.stdout, new RegExp(`^  ${cmd} `, 'm'));
});

t('the entrypoint is rae and the default command is run', () => {
  const cfg = JSON.parse(img().podman(['image', 'inspect', img().tag, '--format', '{{json .Config}}']).stdout) as { Entrypoint: string[]; Cmd: string[]; Env: string[] };
  assert.equal(cfg.Entrypoint, ['node', '/opt/runtime-audit-engine/bin/rae.js']);
  assert.equal(cfg.Cmd, ['run']);
  const dry = img().run(['run', '--dry-run']);
  assert.is(dry.code, 0, dry.stderr);
  assert.match(dry.stderr, /dry run: the configuration is valid and the rules load/);
});

t('the same image converts a Falco rules file to an EngineAuditRules the engine accepts', () => {
  const rules = [
    '- macro: canary_open',
    '  condition: open_read and fd.name startswith /srv/canary/',
    '- rule: Canary opened',
    '  desc: canary',
    '  condition: canary_open',
    '  output: canary (file=%fd.name)',
    '  priority: CRITICAL',
    '',
  ].join('\n');
  const r = img().run(['convert', '--input', '-', '--name', 'canary'], [], rules);
  assert.is(r.code, 0, r.stderr);
  const read = readManifests('canary.yaml', r.stdout, 'deckhouse.io');
  assert.equal(read.diagnostics, []);
  assert.is(read.resources[0]?.kind, 'EngineAuditRules');
  assert.match(r.stdout, /priority: Critical/);
});

t('the same image runs the event generator', () => {
  const r = img().run(['event-generator', 'list', '--json']);
  assert.is(r.code, 0, r.stderr);
  const actions = r.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string });
  assert.ok(
    actions.some((a) => a.action.startsWith('syscall.')),
    r.stdout.slice(0, 500),
  );
  assert.ok(
    actions.some((a) => a.action.startsWith('k8saudit.')),
    r.stdout.slice(0, 500),
  );
});

t('the probe addon loads in the final image (its libraries came from the build stage)', () => {
  const r = img().run(['-e', "const m = require('/opt/runtime-audit-engine/probes/build/Release/rae_probe.node'); console.log(typeof m.Capture, m.abiVersion)"], ['--entrypoint', 'node']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /^function \d+$/m);
});

t('the final stage has no compiler toolchain, npm or devDependencies', () => {
  const script = 'for p in gcc cc c++ clang make npm; do command -v $p; done; ls -d node_modules/typescript node_modules/node-gyp node_modules/uvu probes/src 2>/dev/null; exit 0';
  const r = img().run(['-c', script], ['--entrypoint', 'sh']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), '');
  const present = img().run(['-c', 'ls -d node_modules/assemblyscript node_modules/tsx bin/rae.js rules/syscall'], ['--entrypoint', 'sh']);
  assert.is(present.code, 0, present.stderr);
});

test.run();
