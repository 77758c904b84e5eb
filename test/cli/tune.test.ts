// `rae tune` on a replay of a noisy capture, end to end through the real commands: replay the
// capture, tune on its alert lines, validate the proposed snippet with the rules it tunes, replay
// again with it. The exception must remove exactly the alerts of the top repeating combination
// (each event carries a unique proc.pid, so removed alerts are named one by one) and no other.
// Also: --url ranks the rules of a running forwarder by its alert counter.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Alert } from '../../host/output/alert.js';
import { startTestForwarder } from '../forwarder/helpers.js';

const RULES = `- rule: Read below etc
  desc: a file below /etc opened
  condition: evt.type = openat and fd.name startswith /etc/
  output: read %fd.name by %proc.name (pid=%proc.pid container=%container.id cmd=%proc.cmdline)
  priority: Notice
  exceptions:
    - name: known_readers
      fields: [proc.name]
      values: [[sshd]]

- rule: Shell spawned
  desc: a shell started
  condition: evt.type = execve and proc.name in (sh, bash)
  output: shell %proc.cmdline (pid=%proc.pid parent=%proc.pname)
  priority: Warning
`;

const T0 = Date.UTC(2024, 0, 2, 12, 0, 0);
let pid = 1000;
function event(minute: number, fields: Record<string, string | number>) {
  return JSON.stringify({ source: 'syscall', time: new Date(T0 + minute * 60_000).toISOString(), fields: { 'proc.pid': pid++, 'container.id': 'host', ...fields } });
}

/**
 * 40 cron reads of /etc/passwd (the top combination of its rule), 10 nginx reads, 5 one-off
 * readers, one cron read with another command line, one sshd read (excepted by the rule already);
 * 8 shells, 5 of them under cron (the top combination of theirs) and 3 under sshd.
 */
function capture(): { lines: string[]; topPids: number[] } {
  const lines: string[] = [];
  const topPids: number[] = [];
  for (let i = 0; i < 40; i++) {
    topPids.push(pid);
    lines.push(event(i, { 'evt.type': 'openat', 'fd.name': '/etc/passwd', 'proc.name': 'cron', 'proc.cmdline': 'cron -f' }));
    if (i % 4 === 0) lines.push(event(i, { 'evt.type': 'openat', 'fd.name': '/etc/nginx/nginx.conf', 'proc.name': 'nginx', 'proc.cmdline': 'nginx -g daemon off;', 'container.id': 'c0ffee' }));
    if (i % 8 === 1) lines.push(event(i, { 'evt.type': 'openat', 'fd.name': `/etc/app${i}.conf`, 'proc.name': `app${i}`, 'proc.cmdline': `app${i} --serve` }));
    if (i % 5 === 2) {
      if (i < 25) topPids.push(pid);
      lines.push(event(i, { 'evt.type': 'execve', 'proc.name': 'bash', 'proc.cmdline': 'bash -c date', 'proc.pname': i < 25 ? 'cron' : 'sshd' }));
    }
  }
  lines.push(event(41, { 'evt.type': 'openat', 'fd.name': '/etc/passwd', 'proc.name': 'cron', 'proc.cmdline': 'cron -n' })); // same reader, other command line: not the top combination
  lines.push(event(42, { 'evt.type': 'openat', 'fd.name': '/etc/passwd', 'proc.name': 'sshd', 'proc.cmdline': 'sshd' }));
  return { lines, topPids };
}

function rae(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8', timeout: 600_000, env: { ...process.env, TZ: 'UTC' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const pidsOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l).output_fields['proc.pid'] as number);

test('rae tune on a replay of a noisy capture: the proposed exception validates with its rules and removes exactly the top combination', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rae-tune-'));
  try {
    const rules = join(tmp, 'rules.yaml');
    const events = join(tmp, 'events.jsonl');
    const alerts = join(tmp, 'alerts.jsonl');
    const tuned = join(tmp, 'tune.yaml');
    writeFileSync(rules, RULES);
    const { lines, topPids } = capture();
    writeFileSync(events, `${lines.join('\n')}\n`);

    const before = rae(['replay', '-r', rules, '--input', events, '--rule-matching', 'all']);
    assert.is(before.status, 0, before.stderr);
    writeFileSync(alerts, before.stdout);
    const beforePids = pidsOf(before.stdout);
    assert.is(beforePids.length, 40 + 10 + 5 + 1 + 8); // sshd's read is excepted by the rule already

    const tune = rae(['tune', '--input', alerts]);
    assert.is(tune.status, 0, tune.stderr);
    writeFileSync(tuned, tune.stdout);
    // the report: rules by alerts per hour (56 and 8 alerts over the alerts' 41 minutes), then the combinations
    assert.match(
      tune.stdout,
      '# Read below etc (syscall): 56 alerts, 82 per hour\n#   repeating combinations of container.id, fd.name, proc.cmdline, proc.name:\n#        40  container.id=host fd.name=/etc/passwd proc.cmdline=cron -f proc.name=cron\n#        10  container.id=c0ffee fd.name=/etc/nginx/nginx.conf proc.cmdline=nginx -g daemon off; proc.name=nginx\n',
    );
    assert.match(
      tune.stdout,
      '# Shell spawned (syscall): 8 alerts, 12 per hour\n#   repeating combinations of container.id, proc.cmdline, proc.pname:\n#         5  container.id=host proc.cmdline=bash -c date proc.pname=cron\n#         3  container.id=host proc.cmdline=bash -c date proc.pname=sshd\n',
    );
    assert.match(
      tune.stdout,
      '- rule: "Read below etc"\n  exceptions:\n    - name: rae_tune_container_id__fd_name__proc_cmdline__proc_name\n      fields: [container.id, fd.name, proc.cmdline, proc.name]\n      comps: [=, =, =, =]\n      values:\n        - ["host", "/etc/passwd", "cron -f", "cron"]\n  override:\n    exceptions: append\n',
    );

    const valid = rae(['validate', '-r', rules, '-r', tuned]);
    assert.is(valid.status, 0, valid.stdout + valid.stderr);

    const after = rae(['replay', '-r', rules, '-r', tuned, '--input', events, '--rule-matching', 'all']);
    assert.is(after.status, 0, after.stderr);
    const afterPids = new Set(pidsOf(after.stdout));
    const removed = beforePids.filter((p) => !afterPids.has(p));
    assert.equal(
      removed.sort((a, b) => a - b),
      topPids.sort((a, b) => a - b),
      "the alerts of each rule's top combination removed, and no other",
    );
    assert.is(afterPids.size, beforePids.length - 45);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('rae tune --url: the rules of a running forwarder by its alert counter; no combinations from counters', async () => {
  const t = await startTestForwarder();
  try {
    const alert = (rule: string): Alert => ({ timeNs: 1n, rule, priority: 'Notice', source: 'syscall', tags: [], hostname: 'h', message: rule, outputFields: { 'proc.name': 'x' } });
    for (let i = 0; i < 7; i++) t.fwd.submit(alert('Loud'));
    for (let i = 0; i < 2; i++) t.fwd.submit(alert('Quiet'));
    t.fwd.submit({ ...alert('Engine own'), source: 'internal' });
    // asynchronously: this process serves the forwarder meanwhile
    const r = await promisify(execFile)(process.execPath, ['bin/rae.js', 'tune', '--url', t.fwd.url], { encoding: 'utf8', timeout: 600_000 });
    assert.match(r.stdout, '# Loud (syscall): 7 alerts\n# Quiet (syscall): 2 alerts\n# combinations and exceptions need the alert lines');
    assert.not.match(r.stdout, 'Engine own');
  } finally {
    await t.fwd.close();
  }
});

test.run();
