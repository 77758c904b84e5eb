// The event-generator suite runner of `rae test` (kind 'suite'): each test of a description
// performed for real on this node (perform.ts), against a private `rae run` (engine.ts) or a
// running engine that posts its alerts to options.url, and judged by the alerts the test's own
// processes raised (alerts.ts). Consumes a parsed description; produces one TestOutcome per test.
// Results follow upstream's `event-generator suite test`: a test passes when one alert of its rule
// matches every key of expectedOutcome; a test whose runIf does not hold here is skipped; a test
// without a rule is performed only (upstream's `suite run`) and passes when it performs.
import { randomUUID } from 'node:crypto';
import { Document } from 'yaml';
import { yamlSourceOf } from '../documents.js';
import type { TestFileRunner, TestListing, TestOutcome, TestRunOptions } from '../outcome.js';
import { DEFAULT_RUNTIMES, type ContainersConfig } from '../../sources/container/index.js';
import { AlertReceiver, expectationDiff, matchesTest } from './alerts.js';
import { ChainContainers } from './container.js';
import { CONTAINER_KNOWN_RULE, startSuiteEngine, type SuiteEngine } from './engine.js';
import { buildLeafProgram, type LeafProgram } from './leaf-program.js';
import { loadSuite, looksLikeSuite, type SuiteTest } from './loader.js';
import { performTest } from './perform.js';
import { containersFor, runtimeAt } from './runtime.js';

/** Node's process.arch as upstream names architectures (Go's GOARCH). */
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** Why a test does not run here, or undefined. */
function skipReason(t: SuiteTest): string | undefined {
  const arch = t.runIf?.arch;
  const here = ARCH[process.arch] ?? process.arch;
  if (arch && (arch.op === 'eq' ? here !== arch.val : here === arch.val)) return `runIf: arch ${arch.op} ${arch.val} does not hold on ${here}`;
  return undefined;
}

/**
 * The description's tests, from the YAML the document was read from (readTestDocuments: files and
 * stdin alike, errors placed file:line:col); a document made in memory is loaded unplaced.
 */
function testsOf(file: string, doc: unknown): SuiteTest[] {
  const source = yamlSourceOf(doc);
  return source ? loadSuite(file, source.doc, source.lines) : loadSuite(file, new Document(doc));
}

/** What one test does, in words (`rae test explain`). */
function explainTest(t: SuiteTest): string {
  const lines = [`${t.name}${t.rule ? ` (rule "${t.rule}")` : ''}: ${t.description ?? 'no description'}`];
  const chain = t.context?.processes ?? [];
  if (chain.length > 0)
    lines.push(`  process chain: ${chain.map((p) => `${p.name ?? p.exePath ?? 'process'}${p.user ? ` as ${p.user}` : ''}${p.capabilities ? ` with ${p.capabilities}` : ''}`).join(' -> ')} (the last one performs the steps)`);
  if (t.context?.container) lines.push(`  in a container${t.context.container.name ? ` named ${String(t.context.container.name)}` : ''}`);
  if (t.runIf) lines.push(`  only where ${JSON.stringify(t.runIf)}`);
  if (t.before) lines.push(`  before: bash -c ${JSON.stringify(t.before.trim())}`);
  for (const r of t.resources) lines.push(`  resource ${r.name}: ${r.type}${r.subtype ? ` ${String(r.subtype)}` : ''} ${JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !['type', 'name', 'subtype'].includes(k))))}`);
  for (const s of t.steps)
    lines.push(
      `  step ${s.name}: ${s.syscall}(${Object.entries(s.args)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(', ')})`,
    );
  if (t.after) lines.push(`  after: bash -c ${JSON.stringify(t.after.trim())}`);
  if (!t.rule) lines.push('  expects: nothing (no rule): performed only');
  else {
    const e = t.expectedOutcome ?? {};
    const keys = [...(['source', 'hostname', 'priority'] as const).filter((k) => e[k] !== undefined).map((k) => `${k} ${e[k]}`), ...Object.entries(e.outputFields ?? {}).map(([k, v]) => `${k}=${v}`)];
    lines.push(`  expects: an alert of "${t.rule}" from the test's processes${keys.length > 0 ? ` with ${keys.join(', ')}` : ''}`);
  }
  return lines.join('\n');
}

/** The runtimes tried for the tests' containers: the one socket given, else the Docker and Podman sockets of `rae run`'s defaults. */
async function runtimesOf(socket: string | undefined): Promise<{ runtimes: ContainersConfig; given: boolean }> {
  if (socket) {
    const at = await runtimeAt(socket);
    return { runtimes: containersFor(at.runtime, at.socket), given: true };
  }
  const d = DEFAULT_RUNTIMES;
  return { runtimes: { callTimeoutMs: d.callTimeoutMs, cri: { enabled: false, sockets: [] }, docker: { enabled: true, sockets: [...d.docker] }, podman: { enabled: true, sockets: [...d.podman] } }, given: false };
}

/**
 * How long a runtime container's chain waits for the engine to have the container's metadata:
 * the engine this runner started says so with CONTAINER_KNOWN_RULE (within a wide bound, then
 * the chain starts anyway); an engine at --url cannot, so the chain starts after a pause.
 */
const CONTAINER_KNOWN_WAIT_MS = 60_000;
const URL_ENGINE_SETTLE_MS = 2000;

/** Tuning of a suite runner. */
interface SuiteRunnerOptions {
  /** How long a test waits for its matching alert after its steps (default 30 s: a busy engine may be late). */
  alertWaitMs?: number;
  /**
   * Keep the engine and the receiver from the first run() to close() (the rules files of the first
   * run() apply to all), instead of one engine per file: starting one compiles every rule.
   */
  shared?: boolean;
  /**
   * The container runtimes the runner's engine follows (default: the runtime of the first run's
   * containerSocket, else the configuration's defaults): a shared runner whose runs name different
   * sockets names them all here, so its one engine has the metadata of every test's container.
   */
  follow?: ContainersConfig;
}

/** A suite runner that can be closed (a shared one stops its engine). */
export type SuiteRunner = TestFileRunner & { close(): Promise<void> };

/** A suite runner; `suiteRunner` is the one with the defaults. */
export function createSuiteRunner(tuning: SuiteRunnerOptions = {}): SuiteRunner {
  const alertWaitMs = tuning.alertWaitMs ?? 30_000;
  let kept: Promise<{ receiver: AlertReceiver; engine?: SuiteEngine }> | undefined;
  /** A shared runner's leaf program, built on first use, removed by close(). */
  let keptProgram: LeafProgram | undefined;
  const startAlerts = async (options: TestRunOptions, containers: ContainersConfig | undefined) => {
    const at = options.url ? new URL(options.url) : undefined;
    const receiver = await AlertReceiver.start(at ? { host: at.hostname.replace(/^\[|\]$/g, ''), port: Number(at.port || 80) } : undefined);
    try {
      return { receiver, engine: options.url ? undefined : await startSuiteEngine(options.rulesFiles, receiver.url, options.log, { containers: tuning.follow ?? containers, dnsServers: options.dnsServers }) };
    } catch (err) {
      await receiver.close();
      throw err;
    }
  };
  const stopAlerts = async (a: { receiver: AlertReceiver; engine?: SuiteEngine } | undefined) => {
    await a?.engine?.stop();
    await a?.receiver.close();
  };
  return {
    async close() {
      const k = kept;
      kept = undefined;
      keptProgram?.dispose();
      keptProgram = undefined;
      await stopAlerts(await k?.catch(() => undefined));
    },
    kind: 'suite',
    accepts: looksLikeSuite,
    list(file: string, doc: unknown): TestListing[] {
      return testsOf(file, doc).map((t) => ({ file, name: t.name, rule: t.rule }));
    },
    explain(file: string, doc: unknown): string {
      return testsOf(file, doc).map(explainTest).join('\n\n');
    },
    async *run(file: string, doc: unknown, options: TestRunOptions): AsyncIterable<TestOutcome> {
      const tests = testsOf(file, doc).filter((t) => !options.filter || options.filter.test(t.name));
      const outcome = (t: SuiteTest, start: number, status: TestOutcome['status'], detail?: string): TestOutcome => ({ file, name: t.name, rule: t.rule, status, detail, durationMs: Date.now() - start });
      const runnable = tests.filter((t) => skipReason(t) === undefined);
      let mine: { receiver: AlertReceiver; engine?: SuiteEngine } | undefined;
      let receiver: AlertReceiver | undefined;
      let ownProgram: LeafProgram | undefined;
      let containers: ChainContainers | undefined;
      try {
        const { runtimes, given } = await runtimesOf(options.containerSocket);
        if (runnable.some((t) => t.rule)) {
          if (tuning.shared) {
            kept ??= startAlerts(options, given ? runtimes : undefined);
            receiver = (await kept).receiver;
          } else {
            mine = await startAlerts(options, given ? runtimes : undefined);
            receiver = mine.receiver;
          }
        }
        const program = runnable.length === 0 ? undefined : tuning.shared ? (keptProgram ??= buildLeafProgram()) : (ownProgram = buildLeafProgram());
        const r0 = receiver;
        const ready = !r0
          ? undefined
          : options.url
            ? () => new Promise<void>((res) => setTimeout(res, URL_ENGINE_SETTLE_MS))
            : async (testId: string) => {
                const known = await r0.waitFor(testId, (alerts) => alerts.some((a) => a.rule === CONTAINER_KNOWN_RULE), CONTAINER_KNOWN_WAIT_MS);
                if (!known) options.log(`suite: the engine did not report the runtime metadata of test ${testId}'s container within ${CONTAINER_KNOWN_WAIT_MS / 1000} s; its chain starts anyway`);
              };
        containers = new ChainContainers({ runtimes, ready, log: options.log });
        for (const t of tests) {
          const start = Date.now();
          const skip = skipReason(t);
          if (skip) {
            yield outcome(t, start, 'skipped', skip);
            continue;
          }
          const id = randomUUID();
          options.log(`suite: ${t.name}: performing (test id ${id})`);
          const report = await performTest(t, id, { program: program!.path, containers, log: options.log });
          if (!report.ok) {
            yield outcome(t, start, 'failed', `not performed: ${report.error}`);
            continue;
          }
          if (!t.rule || !receiver) {
            yield outcome(t, start, 'passed', 'performed; no rule, so no alert is expected or checked (upstream: suite run)');
            continue;
          }
          const r = receiver;
          const matched = await r.waitFor(id, (alerts) => matchesTest(t, alerts), alertWaitMs);
          yield matched
            ? outcome(t, start, 'passed')
            : outcome(
                t,
                start,
                'failed',
                expectationDiff(
                  t,
                  r.alerts(id).filter((a) => a.rule !== CONTAINER_KNOWN_RULE),
                ),
              );
        }
      } finally {
        await containers?.close();
        ownProgram?.dispose();
        await stopAlerts(mine);
      }
    },
  };
}

/** The event-generator suite runner with its defaults. */
export const suiteRunner: SuiteRunner = createSuiteRunner();
