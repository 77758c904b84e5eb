// Falco's append_output on the HTTP output for real (root: the kernel probe): a private `rae run`
// whose forwarder.falco.append_output adds extra_fields [proc.env, proc.pid] and an extra_output
// with %proc.exepath to one rule whose own output names none of them, its webhook output posting
// to a loopback HTTP server here. A process of ours is exec'd under a unique name with a marker
// in its environment: the alert posted carries that environment, pid and exe path in
// output_fields, extracted from the event as Falco does (before: null / <NA>, the forwarder only
// had the rendered alert), and the message ends with the extra output. Its arguments (`-`, an
// empty one, one with a blank) are in proc.args and proc.cmdline exactly, as libsinsp joins them
// (the suites' `argv0 - ARGS` comes from their perl leaf, not from the engine).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('append-output.test.ts');
const run_ = gate.run ? test : test.skip;

run_('append_output: extra_fields and extra_output fields are extracted from the event into the webhook alert', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-append-'));
  const posted: Array<{ rule: string; output: string; output_fields: Record<string, unknown> }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      posted.push(JSON.parse(body));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  // a unique comm (at most 15 bytes) for the process the rule selects
  const name = `raeap${process.pid % 100000}`;
  const marker = randomUUID();
  writeFileSync(join(dir, 'rules.yaml'), `- rule: append output probe\n  desc: d\n  condition: evt.type in (execve, execveat) and proc.name = ${name}\n  output: "probe ran (%proc.name)"\n  priority: NOTICE\n  tags: [probe]\n`);
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      'rules:\n  builtIn: []\n  watch: false',
      'api:\n  enabled: false',
      'webhook:\n  enabled: false',
      'forwarder:\n  port: 0',
      `  outputs:\n    webhook:\n      address: ${JSON.stringify(url)}`,
      '  falco:',
      '    append_output:',
      '      - match: { tags: [probe] }',
      '        extra_output: "exe=%proc.exepath"',
      '        extra_fields: [proc.env, proc.pid, proc.args, proc.cmdline, { team: sec }]',
      '      - match: { rule: another rule }',
      '        extra_fields: [proc.cwd]',
      '',
    ].join('\n'),
  );
  symlinkSync('/bin/true', join(dir, name));
  let rae: RaeRun | undefined;
  try {
    rae = startRae(['-c', join(dir, 'config.yaml'), '--state-dir', join(dir, 'state'), '-r', join(dir, 'rules.yaml')]);
    await rae.waitLog(/run: ready/, 0, 300_000);
    execFileSync(join(dir, name), ['-', '', 'a b'], { env: { RAE_APPEND_MARKER: marker, PATH: '/usr/bin:/bin' } });
    const deadline = Date.now() + 60_000;
    while (posted.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.is(posted.length, 1, `one alert posted, got ${posted.length}\n${rae.stderr()}`);
    const a = posted[0]!;
    assert.is(a.rule, 'append output probe');
    assert.is(a.output_fields['proc.env'], `RAE_APPEND_MARKER=${marker} PATH=/usr/bin:/bin`);
    assert.type(a.output_fields['proc.pid'], 'number');
    assert.is(a.output_fields['proc.args'], '-  a b');
    assert.is(a.output_fields['proc.cmdline'], `${name} -  a b`);
    // the executable the kernel ran: the symlink resolved
    const exe = realpathSync('/bin/true');
    assert.is(a.output_fields['proc.exepath'], exe);
    assert.is(a.output_fields.team, 'sec');
    assert.ok(!('proc.cwd' in a.output_fields), 'an entry matching another rule adds nothing');
    // the rule's output (with the container fields every syscall rule gets), then the extra output
    assert.ok(a.output.includes(`probe ran (${name}) container_id=host`) && a.output.endsWith(` exe=${exe}`), a.output);
  } finally {
    await rae?.stop();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
