// The README's shell blocks, run as written against a real `rae run` on loopback: every ```sh
// block of README.md runs in bash (-e, pipefail) from the repository root, bounded by a deadline
// with a wide margin (a block compiles rules: minutes on a loaded 2-core machine).
// Two things differ from a node, and only those are rewritten: the engine this test starts listens
// on ports 0 (the README's 2801 and 9765 become the ports it reports) and keeps its state in a
// temporary directory (the README's /var/lib/runtime-audit-engine). The block with `npm start` /
// `npm test` is not run (npm start is the `rae run` started here; npm test is this suite), but its
// text is checked, so a new command added to it is noticed. And no Markdown file of the repository
// says a feature is missing ("not implemented yet", "... today") unless the statement is on
// STILL_TRUE with the code that keeps it true: such sentences went stale when the feature came.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../helpers/rae-run.js';

const blocks = [...readFileSync('README.md', 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const tmp = mkdtempSync(join(tmpdir(), 'rae-readme-'));
const state = join(tmp, 'state');
let rae: RaeRun | undefined;
const ports = { forwarder: '', webhook: '' };

test.before(async () => {
  const cfg = join(tmp, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n');
  rae = startRae(['--config', cfg, '--state-dir', state]);
  ports.forwarder = (await rae.waitLog(/run: forwarder listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]!;
  ports.webhook = (await rae.waitLog(/run: webhook listening on https:\/\/127\.0\.0\.1:(\d+)/, 0, 300_000))[1]!;
});

test.after(async () => {
  await rae?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * A block with this engine's ports and state directory, run in bash from the repository root; its
 * exit status (null when killed at the deadline) and output. Asynchronous, not spawnSync: this
 * process keeps reading the engine's output while the block runs, so the engine never blocks on
 * a full pipe.
 */
function runBlock(block: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const script = block.replaceAll('127.0.0.1:2801', `127.0.0.1:${ports.forwarder}`).replaceAll('127.0.0.1:9765', `127.0.0.1:${ports.webhook}`).replaceAll('/var/lib/runtime-audit-engine', state);
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

test('readme: the quick-start block is npm start and npm test only (not run here)', () => {
  const quick = blocks.find((b) => b.includes('npm start'));
  assert.ok(quick);
  assert.equal(
    quick!
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean),
    ['npm start', 'npm test'],
  );
});

test('readme: every other shell block runs as written and exits 0', async () => {
  const others = blocks.filter((b) => !b.includes('npm start'));
  assert.ok(others.length >= 3, `${others.length} blocks`);
  for (const block of others) {
    const r = await runBlock(block);
    assert.is(r.status, 0, `${block}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`);
    assert.ok(r.stdout.trim().length > 0, block);
  }
  // what the blocks did reached the engine: the forwarder's test alert and the posted exec into a pod
  await rae!.waitAlerts((a) => a.some((x) => x.rule === 'Test rule') && a.some((x) => x.rule === 'Attach/Exec Pod'), 'the /test alert and the EventList alert');
});

/** Words that state a feature as missing or unfinished. */
const MISSING_FEATURE = /not implemented|unimplemented|not yet|\byet\b|\btoday\b|to come|coming soon|\bfor now\b|\bTODO\b|\bFIXME\b|\blacks?\b|not supported|no support/gi;

/** Statements with those words checked against the code and still true (text as in the file, whitespace collapsed). */
const STILL_TRUE: Array<{ file: string; text: string; why: string }> = [
  { file: 'docs/forwarder.md', text: "falcosidekick's oauthbearer/external/anonymous are not supported", why: 'host/output/destinations/smtp.ts refuses any mechanism but plain and none' },
  { file: 'docs/forwarder.md', text: 'oauthbearer is not supported', why: 'as above' },
  { file: 'docs/resources.md', text: 'The actions whose rule needs what a box lacks say so', why: 'host/generator/cgroup-box.ts: a box has no runtime (Action.container.runtimeOnly)' },
];

/** The repository's Markdown files (not node_modules or build output), relative paths. */
function markdownFiles(dir = '.'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = dir === '.' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) return ['node_modules', 'dist', 'build', '.git'].includes(e.name) ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

/** Every index of `needle` in `text`. */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) out.push(at);
  return out;
}

test('docs: no Markdown file states a feature as missing unless the statement is verified as still true', () => {
  const files = markdownFiles();
  assert.ok(files.includes('README.md') && files.includes('deploy/README.md') && files.includes('docs/containers.md'), files.join(' '));
  const stale: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/\s+/g, ' ');
    const allowed = STILL_TRUE.filter((a) => a.file === file).flatMap((a) => occurrences(text, a.text).map((at) => [at, at + a.text.length] as const));
    for (const m of text.matchAll(MISSING_FEATURE)) {
      if (!allowed.some(([from, to]) => m.index! >= from && m.index! < to)) stale.push(`${file}: "...${text.slice(Math.max(0, m.index! - 80), m.index! + 40)}..."`);
    }
  }
  assert.equal(stale, [], `statements of a missing feature: check each against the code, rewrite it, or (still true) add it to STILL_TRUE:\n${stale.join('\n')}`);
  const gone = STILL_TRUE.filter((a) => !readFileSync(a.file, 'utf8').replace(/\s+/g, ' ').includes(a.text));
  assert.equal(gone, [], 'STILL_TRUE entries no longer in their file: remove them');
});

test.run();
