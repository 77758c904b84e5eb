// The contract between `rae test` (host/cli/test.ts: file discovery, the table, --junit, --list,
// the exit code) and the runners of each kind of test file it accepts: event-generator suite
// files (host/testing/suite/, performed on the node against a running engine) and offline rule
// unit tests (host/testing/unit/, replayed through both engines, no root, no kernel).
// Consumes nothing; produces the types both sides share.

/** One test's result, as the table and the JUnit report show it. */
export interface TestOutcome {
  /** the file the test came from, as given on the command line ('-' for stdin) */
  file: string;
  /** the test's name; an expanded template case carries its case in the name, as upstream's runner names it */
  name: string;
  /** the rule the test expects (or expects not) to fire */
  rule?: string;
  status: 'passed' | 'failed' | 'skipped';
  /** skipped: the reason; failed: a readable diff of what was expected against what came */
  detail?: string;
  durationMs: number;
}

/** A test as `rae test --list` shows it, without running it. */
export interface TestListing {
  file: string;
  name: string;
  rule?: string;
}

/** What every runner may use; each reads the part it needs. */
export interface TestRunOptions {
  /** rules files or directories to load (default: the engine's built-in rules) */
  rulesFiles: string[];
  /** a running engine to test against instead of one the runner starts (suites) */
  url?: string;
  /** the Docker or Podman Engine API socket that suites' containers are made in (default: the engine's default sockets; upstream's --container-runtime-unix-socket) */
  containerSocket?: string;
  /** the DNS servers (`host:port`) the engine a suite runner starts resolves the rules' domain names with (default: the node's resolver; rae test --dns-server) */
  dnsServers?: string[];
  /** only tests whose name matches */
  filter?: RegExp;
  /** progress lines for stderr */
  log(line: string): void;
}

/** A runner of one kind of test file. `rae test` gives each parsed YAML document to the first runner that accepts it. */
export interface TestFileRunner {
  /** the kind, as --list and the report name it: 'suite' | 'unit' */
  kind: string;
  /** whether this runner takes the parsed document (decided by its shape, never by the file name) */
  accepts(doc: unknown): boolean;
  list(file: string, doc: unknown): TestListing[];
  /** `rae test explain`: what the document's tests do, in words */
  explain(file: string, doc: unknown): string;
  /** runs every test of the document, yielding each outcome as it ends; a malformed document throws an error naming file, line and column */
  run(file: string, doc: unknown, options: TestRunOptions): AsyncIterable<TestOutcome>;
}
