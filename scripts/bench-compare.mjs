#!/usr/bin/env node
// Compares two heads on the same benchmarks in the same window: checks each out in a temporary
// git worktree (detached), sets it up (`scripts/setup.sh --for run`: npm ci and the kernel probe),
// then runs `npm run bench -- SUITES` in them alternately, ROUNDS times (the order flips every
// round: old-new, new-old, ...), so that the machine's load falls on both. Prints one JSON
// document on stdout: each figure's values and median per head, and the ratio new/old of the
// medians; progress and the benches' own stderr go to stderr. The worktrees are removed at the
// end, also after a failure or Ctrl-C.
//
//   node scripts/bench-compare.mjs OLD NEW [--rounds N] [--keep] SUITE [SUITE ...]
//   e.g. node scripts/bench-compare.mjs 6cc6cd7 HEAD --rounds 3 eval capture webhook forwarder
//
// OLD and NEW are anything `git rev-parse` takes (commits, branches, HEAD). A figure is one JSON
// line of a bench ({scenario, name, value, unit, ...}, bench/report.ts), keyed by scenario and
// name (a name printed twice in one run gets #2, #3...). A ratio above 1 means NEW printed the
// larger value: better for rates (events/s), worse for times (ms); the unit says which.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const USAGE = 'usage: node scripts/bench-compare.mjs OLD NEW [--rounds N] [--keep] SUITE [SUITE ...]';

function parseArgs(argv) {
  const rest = [];
  let rounds = 3;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--rounds') rounds = Number(argv[++i]);
    else if (argv[i] === '--keep') keep = true;
    else if (argv[i] === '-h' || argv[i] === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else rest.push(argv[i]);
  }
  if (rest.length < 3 || !Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write(`bench-compare: ${rest.length < 3 ? 'OLD, NEW and at least one suite are needed' : `--rounds takes a whole number >= 1, not ${rounds}`}\n${USAGE}\n`);
    process.exit(2);
  }
  const [old, now, ...suites] = rest;
  return { old, now, suites, rounds, keep };
}

/** The commit a ref names in this repository; exits with the reason when it names none. */
function commitOf(ref) {
  const r = spawnSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`bench-compare: '${ref}' names no commit in ${ROOT}\n`);
    process.exit(2);
  }
  return r.stdout.trim();
}

/** Runs a command with stderr passed through; resolves with its stdout, rejects on a non-zero exit. */
function run(cmd, args, cwd) {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('error', fail);
    child.on('close', (code, signal) => (code === 0 ? done(out) : fail(new Error(`${cmd} ${args.join(' ')} in ${cwd} ended with ${signal ?? `exit ${code}`}`))));
  });
}

/** The figures of one bench run's stdout, keyed by scenario/name. */
function figuresOf(stdout) {
  const seen = new Map();
  const out = new Map();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    let f;
    try {
      f = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof f.value !== 'number' || !f.scenario || !f.name) continue;
    const base = `${f.scenario}/${f.name}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    out.set(n === 1 ? base : `${base}#${n}`, { unit: f.unit, value: f.value });
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const opts = parseArgs(process.argv.slice(2));
const heads = [
  { label: 'old', ref: opts.old, commit: commitOf(opts.old) },
  { label: 'new', ref: opts.now, commit: commitOf(opts.now) },
];
const base = mkdtempSync(join(tmpdir(), 'bench-compare-'));
const cleanup = () => {
  if (opts.keep) return process.stderr.write(`bench-compare: worktrees kept in ${base}\n`);
  for (const h of heads) if (h.dir) spawnSync('git', ['worktree', 'remove', '--force', h.dir], { cwd: ROOT, stdio: 'ignore' });
  spawnSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
  rmSync(base, { recursive: true, force: true });
};
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

try {
  for (const h of heads) {
    h.dir = join(base, h.label);
    process.stderr.write(`bench-compare: ${h.label} = ${h.ref} (${h.commit.slice(0, 12)}) in ${h.dir}\n`);
    await run('git', ['worktree', 'add', '--detach', h.dir, h.commit], ROOT);
    await run('bash', ['scripts/setup.sh', '--quiet', '--for', 'run'], h.dir);
    h.values = new Map();
  }
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? heads : [...heads].reverse();
    for (const h of order) {
      process.stderr.write(`bench-compare: round ${round + 1}/${opts.rounds}: ${h.label} (${h.ref}): npm run bench -- ${opts.suites.join(' ')}\n`);
      const figures = figuresOf(await run('npm', ['run', '--silent', 'bench', '--', ...opts.suites], h.dir));
      for (const [key, f] of figures) {
        const v = h.values.get(key) ?? { unit: f.unit, values: [] };
        v.values.push(f.value);
        h.values.set(key, v);
      }
    }
  }
  const [old, now] = heads;
  const keys = [...new Set([...old.values.keys(), ...now.values.keys()])];
  const figures = keys.map((key) => {
    const o = old.values.get(key);
    const n = now.values.get(key);
    const om = o ? Number(median(o.values).toPrecision(6)) : undefined;
    const nm = n ? Number(median(n.values).toPrecision(6)) : undefined;
    const ratio = om !== undefined && nm !== undefined && om !== 0 ? Number((nm / om).toPrecision(4)) : null;
    return { figure: key, unit: (o ?? n).unit, old: o && { median: om, values: o.values }, new: n && { median: nm, values: n.values }, ratio };
  });
  const head = (h) => ({ ref: h.ref, commit: h.commit });
  process.stdout.write(`${JSON.stringify({ old: head(old), new: head(now), suites: opts.suites, rounds: opts.rounds, order: 'alternating, old first in odd rounds', figures }, null, 2)}\n`);
} catch (err) {
  process.stderr.write(`bench-compare: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  cleanup();
}
