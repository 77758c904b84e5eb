// Fuzz target: the resources directory, watched (watch.ts) and reconciled (ResourceController)
// against a DetectionEngine on the reference interpreter, as `rae run` wires them. Each case is a
// few operations on the watched directory: manifests written whole or in two parts (a partial
// write seen first), random YAML documents, random bytes, files a few bytes either side of
// maxFileBytes, links to a secret outside the directory, to another manifest inside, and to
// nothing, a directory and a FIFO under manifest names, files removed. Property: the watch
// settles (idle resolves) without an exception, every rejection is located (file:line:col) and
// never quotes the secret, and the directory keeps being served: a canary EngineAuditRules
// written after the case becomes part of the running ruleset.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { createMetrics } from '../../host/metrics/index.js';
import { ResourceController } from '../../host/resources/controller.js';
import type { Rejection } from '../../host/resources/report.js';
import { watchDirectory } from '../../host/resources/watch.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { runFuzz, type FuzzBounds, type FuzzReport } from './run.js';

const MAX_FILE = 64 * 1024;
const SECRET = 'SECRET-TOKEN-3f9c';
const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const MODULE = `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  version: 1\n  settings: {}\n`;
const rulesManifest = (name: string, rule: string, condition: string) =>
  `${H}kind: EngineAuditRules\nmetadata:\n  name: ${name}\nspec:\n  rules:\n    - rule:\n        name: ${JSON.stringify(rule)}\n        desc: d\n        condition: ${JSON.stringify(condition)}\n        output: o %fd.name\n        priority: Warning\n`;

type Op = { op: 'write'; name: string; text: string; cut?: number } | { op: 'size'; name: string; delta: number } | { op: 'link'; name: string; to: 'secret' | 'inside' | 'nothing' | 'dir' } | { op: 'dir' | 'fifo' | 'remove'; name: string };

const fileName = fc.constantFrom('a.yaml', 'b.yml', 'c.json', 'd.yaml', '.hidden.yaml', 'e.txt');
const condition = fc.oneof(
  fc.constantFrom('evt.type = openat and fd.name = /etc/x', 'proc.name in (a, b)', 'fd.name startswith /tmp', 'evt.type = openat and', 'nope.field = 1', '((((', 'fd.name glob "/etc/*"', `${'not '.repeat(40)}evt.type = open`),
  fc.string({ maxLength: 60 }),
);
const manifest = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), fc.string({ minLength: 1, maxLength: 20 }), condition).map(([n, r, c]) => rulesManifest(n, r, c));
const yamlDoc = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)),
  fc
    .record({ apiVersion: fc.constantFrom('deckhouse.io/v1alpha1', 'x/v1'), kind: fc.constantFrom('EngineAuditRules', 'ModuleConfig', 'Pod'), metadata: fc.jsonValue({ maxDepth: 2 }), spec: fc.jsonValue({ maxDepth: 3 }) })
    .map((v) => stringify(v)),
);
const text = fc.oneof(
  { weight: 4, arbitrary: manifest },
  { weight: 2, arbitrary: yamlDoc },
  { weight: 1, arbitrary: fc.array(fc.oneof(manifest, yamlDoc), { minLength: 2, maxLength: 3 }).map((docs) => docs.join('\n---\n')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b).toString('latin1')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), name: fileName, text, cut: fc.option(fc.nat(), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('size' as const), name: fileName, delta: fc.integer({ min: -4, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('link' as const), name: fileName, to: fc.constantFrom('secret' as const, 'inside' as const, 'nothing' as const, 'dir' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('dir' as const, 'fifo' as const, 'remove' as const), name: fileName }) },
);

/** Fuzzes one watched resources directory within `bounds`. */
export async function fuzzResources(bounds: FuzzBounds): Promise<FuzzReport> {
  const root = mkdtempSync(join(tmpdir(), 'rae-fuzz-res-'));
  const dir = join(root, 'resources');
  mkdirSync(dir);
  writeFileSync(join(root, 'secret.yaml'), `token: ${SECRET}\n`);
  writeFileSync(join(dir, '00-module.yaml'), MODULE);
  const logs: string[] = [];
  const rejections: Rejection[] = [];
  const thrown: unknown[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: () => {}, engine: 'interpreter' });
  const metrics = createMetrics({ processMetrics: false });
  const controller = new ResourceController({
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: () => [],
    defaultBuiltIn: [],
    onModuleState: () => {},
    reporter: { log: (m) => logs.push(m), alert: () => {}, metrics, hostname: 'h' },
  });
  const watch = await watchDirectory({
    dir,
    log: (m) => logs.push(m),
    maxFileBytes: MAX_FILE,
    onChange: async (files) => {
      try {
        rejections.push(...(await controller.apply(files)).rejections);
      } catch (err) {
        thrown.push(err);
      }
    },
  });
  const remove = (name: string) => rmSync(join(dir, name), { recursive: true, force: true });
  let canary = 0;
  try {
    return await runFuzz(
      'resources',
      fc.array(op, { minLength: 1, maxLength: 5 }),
      async (ops) => {
        rejections.length = 0;
        for (const o of ops) {
          const path = join(dir, o.name);
          remove(o.name);
          if (o.op === 'write') {
            if (o.cut !== undefined) {
              writeFileSync(path, o.text.slice(0, o.cut % (o.text.length + 1)));
              await new Promise((resolve) => setTimeout(resolve, 60)); // past the debounce: the partial text is read
            }
            writeFileSync(path, o.text);
          } else if (o.op === 'size') writeFileSync(path, `# ${'x'.repeat(MAX_FILE + o.delta - 3)}\n`);
          else if (o.op === 'link') symlinkSync(o.to === 'secret' ? '../secret.yaml' : o.to === 'inside' ? '00-module.yaml' : o.to === 'dir' ? '.' : 'nothing.yaml', path);
          else if (o.op === 'dir') mkdirSync(path);
          else if (o.op === 'fifo') execFileSync('mkfifo', [path]);
        }
        const name = `canary-${++canary}`;
        writeFileSync(join(dir, 'zz-canary.yaml'), rulesManifest(name, `Canary ${canary}`, 'fd.name = /canary'));
        const deadline = Date.now() + 300_000;
        while (!controller.activeRules.includes(name)) {
          if (Date.now() > deadline) throw new Error(`the canary ${name} never became active; active: ${controller.activeRules.join(', ')}; log: ${logs.slice(-5).join(' | ')}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await watch.idle();
        if (!engine.ruleset?.ruleset.rules.some((r) => r.name === `Canary ${canary}`)) throw new Error(`the canary ${name} is active but not in the running ruleset`);
        if (thrown.length > 0) throw new Error(`reconcile threw: ${String(thrown[0])}`);
        const unlocated = rejections.find((r) => !/:\d+:\d+$/.test(r.where));
        if (unlocated) throw new Error(`a rejection without a location: ${JSON.stringify(unlocated).slice(0, 300)}`);
        const leak = [...logs, ...rejections.map((r) => JSON.stringify(r))].find((l) => l.includes(SECRET));
        if (leak) throw new Error(`the secret behind a link was quoted: ${leak.slice(0, 300)}`);
        for (const o of ops) remove(o.name);
      },
      { ...bounds },
    ).then((r) => ({ ...r, accepted: canary }));
  } finally {
    watch.close();
    rmSync(root, { recursive: true, force: true });
  }
}
