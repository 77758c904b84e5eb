// Falco's file_output and program_output through the forwarder (real files, real processes),
// and Falco's JSON switches on the alert line (stdout and the file alike).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, existsSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alertJson, type Alert } from '../../../host/output/alert.js';
import { startTestForwarder } from '../../../support/forwarder.js';
import { until } from '../receiver.js';

const alert = (i: number, extra: Partial<Alert> = {}): Alert => ({
  timeNs: 1_704_196_800_000_000_001n + BigInt(i),
  rule: 'Read sensitive file',
  priority: 'Warning',
  source: 'syscall',
  tags: ['fs', 'mitre'],
  hostname: 'node-1',
  message: `file opened (n=${i})`,
  outputFields: { 'fd.name': '/etc/shadow', n: i },
  ...extra,
});
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : []);

function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rae-fwd-out-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

for (const keepAlive of [false, true]) {
  test(`file output (keep_alive ${keepAlive}): every alert line appended, identical to stdout's`, async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'events.json');
    const t = await startTestForwarder({ outputs: { file: { filename: file, keep_alive: keepAlive } } });
    try {
      for (let i = 0; i < 50; i++) t.fwd.submit(alert(i));
      await until(() => lines(file).length === 50, 'fifty lines in the file');
      if (!keepAlive) {
        // Reopened per write: a rotated file is recreated on the next alert.
        renameSync(file, `${file}.1`);
        t.fwd.submit(alert(50));
        await until(() => lines(file).length === 1, 'the new file');
      }
      await t.waitForLines(keepAlive ? 50 : 51);
      const written = keepAlive ? lines(file) : [...lines(`${file}.1`), ...lines(file)];
      assert.equal(written, t.lines());
      assert.is(written[3], alertJson(alert(3)));
    } finally {
      await t.fwd.close();
      tmp.remove();
    }
  });

  test(`program output (keep_alive ${keepAlive}): the program gets the alert lines on stdin`, async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'from-program.json');
    const t = await startTestForwarder({ stdout: false, outputs: { program: { program: `cat >> '${file}'`, keep_alive: keepAlive } } });
    try {
      for (let i = 0; i < 20; i++) t.fwd.submit(alert(i));
      await until(() => lines(file).length === 20, 'twenty lines from the program');
      assert.equal(
        lines(file),
        Array.from({ length: 20 }, (_, i) => alertJson(alert(i))),
      );
    } finally {
      await t.fwd.close();
      tmp.remove();
    }
  });
}

test('program output without keep_alive: a program exiting non-zero is a counted failure', async () => {
  const t = await startTestForwarder({ stdout: false, outputs: { program: { program: 'cat > /dev/null; exit 3', retries: 1 } } });
  try {
    t.fwd.submit(alert(1));
    await until(() => t.logs.some((l) => l.includes('program output failing: exit status 3')), 'the failure');
    await until(async () => (await t.metrics.exposition()).body.includes('enginesecurity_enginesidekick_outputs_total{destination="program",status="error"} 1'), 'the counted failure');
  } finally {
    await t.fwd.close();
  }
});

test('Falco JSON switches: output and tags off, message on, ISO 8601 time, append_output; the file gets the same line', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.json');
  const t = await startTestForwarder({
    outputs: { file: { filename: file } },
    falco: {
      json_include_output_property: false,
      json_include_tags_property: false,
      json_include_message_property: true,
      time_format_iso_8601: false,
      append_output: [
        { match: { source: 'syscall', tags: ['fs'] }, extra_output: 'file=%fd.name user=%user.name', extra_fields: ['fd.name', 'user.name', { team: 'sec' }] },
        { match: { rule: 'Other rule' }, extra_output: 'never' },
      ],
    },
  });
  try {
    t.fwd.submit(alert(7));
    await until(() => lines(file).length === 1, 'the line');
    await t.waitForLines(1);
    assert.equal(lines(file), t.lines());
    assert.is(
      lines(file)[0],
      '{"hostname":"node-1","message":"file opened (n=7) file=/etc/shadow user=<NA>","output_fields":{"evt.time":1704196800000000008,"fd.name":"/etc/shadow","n":7,"team":"sec","user.name":null},"priority":"Warning","rule":"Read sensitive file","source":"syscall","time":"2024-01-02T12:00:00.000000008Z"}',
    );
  } finally {
    await t.fwd.close();
    tmp.remove();
  }
  const iso = await startTestForwarder({ falco: { json_include_output_property: true, json_include_tags_property: true, json_include_message_property: false, time_format_iso_8601: true, append_output: [] } });
  try {
    iso.fwd.submit(alert(1));
    const [line] = await iso.waitForLines(1);
    assert.is(
      line,
      '{"hostname":"node-1","output":"2024-01-02T12:00:00.000000002Z: Warning file opened (n=1)","output_fields":{"evt.time.iso8601":"2024-01-02T12:00:00.000000002Z","fd.name":"/etc/shadow","n":1},"priority":"Warning","rule":"Read sensitive file","source":"syscall","tags":["fs","mitre"],"time":"2024-01-02T12:00:00.000000002Z"}',
    );
  } finally {
    await iso.fwd.close();
  }
});

test('bad append_output entries are refused with the key named', async () => {
  try {
    await startTestForwarder({ falco: { json_include_output_property: true, json_include_tags_property: true, json_include_message_property: false, time_format_iso_8601: false, append_output: [{ match: { rulez: 'x' } } as never] } });
    assert.unreachable('should have been refused');
  } catch (err) {
    assert.is((err as Error).message, 'config forwarder.falco.append_output[0].match.rulez: unknown key');
  }
});

test.run();
