// `rae test`: runs rule test files (files, directories of *.yaml/*.yml, or '-' for stdin). Each
// YAML document goes to the first runner of RUNNERS that accepts it (host/testing/outcome.ts);
// a document none accepts, or a malformed one, is a located error (exit 2). Prints each result
// as it ends on stderr, then the table and a summary line on stdout; --junit writes JUnit XML.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { locate, readTestDocuments, TestFileError } from '../testing/documents.js';
import type { TestFileRunner, TestOutcome, TestRunOptions } from '../testing/outcome.js';
import { junitXml, resultTable, summaryLine } from '../testing/report.js';
import { createSuiteRunner } from '../testing/suite/index.js';
import { unitRunner } from '../testing/unit/index.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';

/**
 * The suite runner keeps one engine (and its alert receiver) for every suite file of the run:
 * starting one compiles every rule. Closed when the run ends.
 */
const suites = createSuiteRunner({ shared: true });

/** The runners, in the order they are asked: a document goes to the first that accepts it. */
const RUNNERS: readonly TestFileRunner[] = [unitRunner, suites];

const HELP = `Usage: rae test [options] FILE|DIR|- ...
       rae test --list [--filter REGEX] FILE|DIR|- ...
       rae test explain FILE|DIR|- ...

Runs rule tests and reports each: offline unit tests (recorded events and the alerts expected of
them, judged by both engines, the compiled evaluator and the reference interpreter, without root
or a kernel; docs/rule-tests.md), and event-generator suite files as upstream writes them (each
test performed on this node, as root, against a 'rae run' started here or the one at --url;
docs/test-suites.md). A directory runs every *.yaml/*.yml file directly in it, in
name order; '-' reads one file from standard input. Each YAML document of a file is one test
file of a known kind (${RUNNERS.map((r) => r.kind).join(', ')}).

Each result is printed on stderr as it ends; at the end a table (passed; failed with expected
against got; skipped with the reason) and a summary line on stdout.

Options:
  -r, --rules FILE|DIR   rules for the tests whose file names none (repeatable; default: the
                         built-in rules rae run loads)
      --filter REGEX     only the tests whose name matches
      --url URL          a running engine to test against (suites), instead of one started here
      --container-runtime-unix-socket PATH
                         the Docker or Podman socket that suite tests with context.container
                         make their containers in (default: rae run's default sockets; none
                         answering: a cgroup box, without runtime metadata)
      --dns-server HOST:PORT
                         a DNS server the engine started here resolves the rules' domain
                         names with (config dns.servers; repeatable; default: the node's
                         resolver), e.g. one that gives the cluster's API server name a test
                         address, as rules/tests/syscall-container-suite.yaml needs
      --list             list the tests (kind, file, name, rule) without running them
      --junit FILE       also write the results as JUnit XML (for CI systems)
  -h, --help             show this help

explain: says in words what each test file's tests do, without running them.

Exit status: 0 no test failed; 1 a test failed; 2 bad usage, or a malformed or unreadable test
file (a located error: file:line:col).`;

/** The test files named on the command line: files, the *.yaml/*.yml of directories, or '-'. */
function testFiles(args: readonly string[]): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const arg of args) {
    try {
      if (arg === '-') out.push({ file: '-', text: readFileSync(0, 'utf8') });
      else if (statSync(arg).isDirectory()) {
        const names = readdirSync(arg)
          .filter((n) => /\.ya?ml$/.test(n))
          .sort();
        if (names.length === 0) throw new TestFileError(`${arg}: no *.yaml or *.yml file in this directory`);
        for (const n of names) out.push({ file: join(arg, n), text: readFileSync(join(arg, n), 'utf8') });
      } else out.push({ file: arg, text: readFileSync(arg, 'utf8') });
    } catch (err) {
      if (err instanceof TestFileError) throw err;
      throw new TestFileError(`${arg}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
  }
  return out;
}

/** Every document of every file with the runner that takes it; a document none takes is a located error. */
function assign(args: readonly string[]): Array<{ file: string; doc: unknown; runner: TestFileRunner }> {
  return testFiles(args).flatMap(({ file, text }) => {
    const docs = readTestDocuments(file, text);
    if (docs.length === 0) throw new TestFileError(`${file}: holds no YAML document`);
    return docs.map((doc) => {
      const runner = RUNNERS.find((r) => r.accepts(doc));
      if (!runner)
        throw new TestFileError(
          `${locate(file, doc)}: not a test file of a known kind (${RUNNERS.map((r) => r.kind).join(', ')}): a unit-test file is a map with 'unitTests' (docs/rule-tests.md), an event-generator suite one with 'tests' (docs/test-suites.md)`,
        );
      return { file, doc, runner };
    });
  });
}

/** Whether an error is a runner's located error (outcome.ts: it names the file first), as opposed to a fault of the runner. */
function isLocated(err: unknown, file: string): err is Error {
  return err instanceof TestFileError || (err instanceof Error && err.message.startsWith(`${file}:`));
}

function regexOf(text: string | undefined): RegExp | undefined {
  if (text === undefined) return undefined;
  try {
    return new RegExp(text);
  } catch (err) {
    throw new UsageError(`--filter: ${(err as Error).message}`);
  }
}

function mark(o: TestOutcome): string {
  return `${o.status === 'failed' ? 'FAIL' : o.status === 'passed' ? 'ok  ' : 'skip'} ${o.file}: ${o.name} (${Math.round(o.durationMs)} ms)`;
}

export const testCommand: Command = {
  name: 'test',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        rules: { type: 'string', short: 'r', multiple: true },
        filter: { type: 'string' },
        url: { type: 'string' },
        'container-runtime-unix-socket': { type: 'string' },
        'dns-server': { type: 'string', multiple: true },
        list: { type: 'boolean' },
        junit: { type: 'string' },
      },
      true,
    );
    const explain = positionals[0] === 'explain';
    const args = explain ? positionals.slice(1) : positionals;
    if (args.length === 0) throw new UsageError(`no test file given${explain ? ' to explain' : ''}`);
    if (args.filter((a) => a === '-').length > 1) throw new UsageError("'-' (standard input) can be given once");
    const filter = regexOf(values.filter);
    let current = '';
    try {
      const work = assign(args);
      if (explain) {
        for (const w of work) {
          current = w.file;
          process.stdout.write(`${w.runner.explain(w.file, w.doc)}\n`);
        }
        return 0;
      }
      if (values.list) {
        for (const w of work) {
          current = w.file;
          for (const l of w.runner.list(w.file, w.doc)) {
            if (!filter || filter.test(l.name)) process.stdout.write(`${w.runner.kind}\t${l.file}\t${l.name}${l.rule ? `\t${l.rule}` : ''}\n`);
          }
        }
        return 0;
      }
      const options: TestRunOptions = {
        rulesFiles: values.rules ?? [],
        url: values.url,
        containerSocket: values['container-runtime-unix-socket'],
        dnsServers: values['dns-server'],
        filter,
        log: (line) => process.stderr.write(`test: ${line}\n`),
      };
      const outcomes: TestOutcome[] = [];
      const started = performance.now();
      for (const w of work) {
        current = w.file;
        for await (const o of w.runner.run(w.file, w.doc, options)) {
          outcomes.push(o);
          process.stderr.write(`${mark(o)}\n`);
        }
      }
      const wall = performance.now() - started;
      if (outcomes.length === 0) throw new TestFileError(`no test to run${filter ? ` (none matches --filter ${values.filter})` : ''}`);
      process.stdout.write(`${resultTable(outcomes)}\n\nrae test: ${summaryLine(outcomes, wall)}\n`);
      if (values.junit !== undefined) {
        try {
          writeFileSync(values.junit, junitXml(outcomes, wall));
        } catch (err) {
          throw new TestFileError(`--junit ${values.junit}: cannot write: ${(err as Error).message}`);
        }
      }
      return outcomes.some((o) => o.status === 'failed') ? 1 : 0;
    } catch (err) {
      if (!isLocated(err, current)) throw err;
      process.stderr.write(`rae test: ${(err as Error).message}\n`);
      return 2;
    } finally {
      // the suites' shared engine (if a suite started one) stops however the run ends
      await suites.close();
    }
  },
};
