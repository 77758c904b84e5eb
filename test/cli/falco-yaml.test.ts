// Falco 0.45's own falco.yaml given to `rae run -c`, as a Falco user would: real `rae` processes.
// The file is read from ../shared (upstream data, never copied here); every top-level key is
// honoured or answered with one located line, and the file is recognised by its keys, not its name.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../host/config/config.js';
import { FALCO_KEYS } from '../../host/config/falco-yaml.js';

const FALCO_YAML = join('..', 'shared', 'falco-config', 'falco.yaml');
if (!existsSync(FALCO_YAML)) throw new Error(`${FALCO_YAML} is missing: this test reads Falco 0.45's falco.yaml from the shared upstream data (../shared/falco-config)`);

const tmp = mkdtempSync(join(tmpdir(), 'rae-falco-yaml-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

function rae(args: string[]) {
  return spawnSync(process.execPath, ['bin/rae.js', 'run', ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
}

const rules = join(tmp, 'rules.yaml');
writeFileSync(rules, '- rule: opened\n  desc: d\n  condition: evt.type = openat and fd.name = /etc/x\n  output: opened %fd.name\n  priority: WARNING\n');

/** The located lines a run printed about the configuration file `file`. */
const configLines = (stderr: string, file: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith(`run: config ${file}:`))
    .map((l) => l.slice(`run: config ${file}:`.length));

test("falco.yaml: Falco 0.45's default file is accepted as it is; each key not applied has one located line", () => {
  const r = rae(['-c', FALCO_YAML, '-r', rules, '--dry-run']);
  assert.is(r.status, 0, r.stderr);
  const lines = configLines(r.stderr, FALCO_YAML);
  const text = readFileSync(FALCO_YAML, 'utf8').split('\n');
  // each line sits on its key: line:col points at the key's first character
  for (const l of lines) {
    const m = l.match(/^(\d+):(\d+): ([a-z_]+): /);
    assert.ok(m, l);
    assert.is(text[Number(m![1]) - 1]!.slice(Number(m![2]) - 1).split(':')[0], m![3], l);
  }
  const keys = lines.map((l) => l.split(': ')[1]);
  assert.equal(keys, [
    'config_files',
    'rules_files',
    'engine',
    'capture',
    'plugins',
    'json_output',
    'outputs_queue',
    'append_output',
    'syslog_output',
    'webserver',
    'log_syslog',
    'libs_logger',
    'output_timeout',
    'syscall_event_timeouts',
    'syscall_event_drops',
    'metrics',
    'base_syscalls',
    'falco_libs',
  ]);
  assert.ok(lines.includes('179:1: config_files: /etc/falco/config.d not found, nothing merged from it') || existsSync('/etc/falco/config.d'), lines.join('\n'));
  assert.ok(lines.includes('657:1: json_output: false not applied: stdout carries one JSON line per alert always (set forwarder.stdout: false for none); the alert text is its output property'), lines.join('\n'));
  // Falco's own rules files are not on this machine (-r replaces rules_files, as Falco's -r does)
  assert.ok(
    lines.includes("239:1: rules_files: not found, not loaded: /etc/falco/falco_rules.yaml, /etc/falco/falco_rules.local.yaml, /etc/falco/rules.d (the built-in sets rules.builtIn stand for Falco's falco_rules.yaml)") ||
      existsSync('/etc/falco'),
    lines.join('\n'),
  );
  assert.match(r.stderr, 'run: dry run: the configuration is valid');
});

test("falco.yaml: every top-level key of Falco's file has a meaning here (docs/falco.md lists each)", () => {
  const top = readFileSync(FALCO_YAML, 'utf8')
    .split('\n')
    .filter((l) => /^[a-z_]+:/.test(l))
    .map((l) => l.split(':')[0]!);
  assert.equal(
    top.filter((k) => !FALCO_KEYS.includes(k)),
    [],
  );
  const doc = readFileSync('docs/falco.md', 'utf8');
  for (const k of [...top, 'rules_file']) assert.match(doc, `| \`${k}\``, k);
});

test('falco.yaml: keys are honoured with Falco meaning: rules, outputs, json switches, priority, webserver, log level', () => {
  const dir = join(tmp, 'conf');
  mkdirSync(dir);
  const confd = join(dir, 'config.d');
  mkdirSync(confd);
  writeFileSync(join(confd, '10-http.yaml'), 'http_output:\n  enabled: true\n  url: http://127.0.0.1:9/falco\n  insecure: true\n');
  const file = join(dir, 'node.conf'); // any name: the shape decides
  writeFileSync(
    file,
    [
      'config_files: [config.d]',
      `rules_files: [${rules}]`,
      'priority: warning',
      'rule_matching: all',
      'json_output: true',
      'json_include_tags_property: false',
      'time_format_iso_8601: true',
      'stdout_output: {enabled: false}',
      'file_output: {enabled: true, filename: events.json, keep_alive: true}',
      'webserver: {enabled: true, listen_port: 28765, listen_address: 127.0.0.1}',
      'log_level: notice',
      'falco_libs: {snaplen: 256}',
      'watch_config_files: false',
      '',
    ].join('\n'),
  );
  const r = rae(['-c', file, '-o', 'rules.builtIn=[]', '--dry-run', '-L', '--json']);
  assert.is(r.status, 0, r.stderr);
  assert.equal(
    (JSON.parse(r.stdout) as Array<{ name: string }>).map((x) => x.name),
    ['opened'],
  );
  const lines = configLines(r.stderr, file);
  assert.equal(
    lines.map((l) => l.split(': ').slice(0, 2).join(': ')),
    ['10:1: webserver', '12:1: falco_libs'],
  );
  // a key merged from config_files is located in the file it came from
  assert.match(r.stderr, `run: config ${join(confd, '10-http.yaml')}:1:1: http_output: onto forwarder.outputs.webhook`);
  // the values themselves, as rae run loads them
  const { config: c, problems } = loadConfig(file, undefined, [], {});
  assert.equal(problems, []);
  assert.equal(c.rules.files, [rules]);
  assert.is(c.rules.minPriority, 'warning');
  assert.is(c.rules.ruleMatching, 'all');
  assert.is(c.rules.watch, false);
  assert.is(c.forwarder.stdout, false);
  assert.equal(c.forwarder.falco.json_include_tags_property, false);
  assert.equal(c.forwarder.falco.time_format_iso_8601, true);
  assert.equal(c.forwarder.outputs.file, { filename: join(dir, 'events.json'), keep_alive: true });
  assert.equal(c.forwarder.outputs.webhook, { address: 'http://127.0.0.1:9/falco', checkcert: false });
  assert.is(c.forwarder.port, 28765);
  assert.is(c.forwarder.address, '127.0.0.1');
  assert.is(c.logLevel, 'info');
  assert.is(c.syscall.snaplen, 256);
});

test('falco.yaml: a key Falco does not have, a plugin or a driver this engine cannot run, stop the start with a located line', () => {
  const file = join(tmp, 'bad.yaml');
  writeFileSync(file, ['json_output: true', 'load_plugins: [k8saudit, cloudtrail]', 'engine:', '  kind: kmod', 'jsonoutput: true', ''].join('\n'));
  const r = rae(['-c', file, '-o', 'rules.builtIn=[]', '--dry-run']);
  assert.is(r.status, 1);
  assert.match(r.stderr, `run: config ${file}:2:1: load_plugins: plugins cloudtrail cannot be loaded: this engine runs no Falco plugins (container and k8saudit are built in)`);
  assert.match(r.stderr, `run: config ${file}:3:1: engine: kind kmod is not supported: this engine has one kernel driver, the CO-RE eBPF probe (modern_ebpf)`);
  assert.match(r.stderr, `run: config ${file}:5:1: jsonoutput: unknown key (not a key of Falco 0.45's falco.yaml; see docs/falco.md)`);
  assert.match(r.stderr, `run: config ${file}:2:1: load_plugins: k8saudit: orchestrator audit events arrive on the HTTPS webhook source`);
});

test.run();
