// The report of a `rae test` run: the table printed at the end (passed; failed with expected vs
// got; skipped with the reason), its summary line, and the JUnit XML file CI systems read (the
// schema Jenkins, GitLab and GitHub reporters take: testsuites > testsuite per file > testcase,
// with <failure> and <skipped>). Consumes TestOutcomes; produces text.
import type { TestOutcome } from './outcome.js';

/** Counts of a run's outcomes. */
function counts(outcomes: readonly TestOutcome[]): Record<TestOutcome['status'], number> {
  const c = { passed: 0, failed: 0, skipped: 0 };
  for (const o of outcomes) c[o.status]++;
  return c;
}

/** The summary line: `N passed, N failed, N skipped (N tests, S s)`. */
export function summaryLine(outcomes: readonly TestOutcome[], wallMs: number): string {
  const c = counts(outcomes);
  return `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped (${outcomes.length} tests, ${(wallMs / 1000).toFixed(1)} s)`;
}

/** The table: one row per test (result, file, test, rule), a failure's diff and a skip's reason indented below its row. */
export function resultTable(outcomes: readonly TestOutcome[]): string {
  const head = ['RESULT', 'FILE', 'TEST', 'RULE'];
  const rows = outcomes.map((o) => [o.status === 'failed' ? 'FAILED' : o.status, o.file, o.name, o.rule ?? '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(head)];
  outcomes.forEach((o, i) => {
    out.push(line(rows[i]!));
    if (o.status !== 'passed' && o.detail) out.push(...o.detail.split('\n').map((d) => `    ${d}`));
  });
  return out.join('\n');
}

/** Text escaped for XML content and attributes; characters XML 1.0 cannot hold become U+FFFD. */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** The JUnit XML report: one testsuite per test file, in the order the files ran. */
export function junitXml(outcomes: readonly TestOutcome[], wallMs: number): string {
  const files = [...new Set(outcomes.map((o) => o.file))];
  const c = counts(outcomes);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="rae test" tests="${outcomes.length}" failures="${c.failed}" errors="0" skipped="${c.skipped}" time="${seconds(wallMs)}">`];
  for (const file of files) {
    const mine = outcomes.filter((o) => o.file === file);
    const m = counts(mine);
    const time = mine.reduce((t, o) => t + o.durationMs, 0);
    out.push(`  <testsuite name="${xml(file)}" tests="${mine.length}" failures="${m.failed}" errors="0" skipped="${m.skipped}" time="${seconds(time)}">`);
    for (const o of mine) {
      const attrs = `name="${xml(o.name)}" classname="${xml(o.rule ?? file)}" file="${xml(file)}" time="${seconds(o.durationMs)}"`;
      const detail = o.detail ?? '';
      if (o.status === 'passed') out.push(`    <testcase ${attrs}/>`);
      else if (o.status === 'skipped') out.push(`    <testcase ${attrs}>`, `      <skipped message="${xml(detail)}"/>`, '    </testcase>');
      else out.push(`    <testcase ${attrs}>`, `      <failure message="${xml(detail.split('\n')[0]!)}" type="failed">${xml(detail)}</failure>`, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
