// The offline unit-test file (docs/rule-tests.md): a YAML document with a top-level `unitTests`
// list, each test one or more recorded events (a field event or an audit event inline, or a file
// in a format `rae replay` reads) and the alerts expected of them (none: `expect: []`).
// Consumes a plain document from readTestDocuments; produces a checked UnitFile, or throws a
// located TestFileError naming the first problem.
import { dirname, resolve } from 'node:path';
import { parsePriority } from '../../engine/priority.js';
import { locate, testFileError } from '../documents.js';

/** One alert a test expects: every given key must hold of the alert. */
export interface ExpectedAlert {
  rule: string;
  /** compared case-insensitively, as upstream's runner compares it */
  priority?: string;
  source?: string;
  /** each key: the alert's output_fields value, compared as JSON (null: missing) */
  outputFields?: Record<string, unknown>;
}

/** Where a test's events come from. */
type EventInput = { kind: 'inline'; format: 'fields' | 'audit'; value: unknown } | { kind: 'file'; format: 'fields' | 'audit'; path: string };

export interface UnitTest {
  name: string;
  /** the rule the test is about: named by `rule`, else the first expected alert's */
  rule?: string;
  input: EventInput;
  /** every alert the test's events raise, in order; [] for none */
  expect: ExpectedAlert[];
  /** file:line:col of the test, for errors found while running it */
  where: string;
}

export interface UnitFile {
  /** rules files named by the file, resolved against its folder; undefined: the command's */
  rules?: string[];
  ruleMatching: 'first' | 'all';
  tests: UnitTest[];
}

const TOP_KEYS = ['unitTests', 'rules', 'ruleMatching'];
const TEST_KEYS = ['name', 'rule', 'event', 'auditEvent', 'file', 'format', 'expect'];
const EXPECT_KEYS = ['rule', 'priority', 'source', 'outputFields'];
const INPUT_KEYS = ['event', 'auditEvent', 'file'] as const;

/** Whether a document is a unit-test file: a map with a `unitTests` key (upstream suites have `tests`). */
export function isUnitDocument(doc: unknown): boolean {
  return isMap(doc) && 'unitTests' in doc;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Throws on a key outside `known`, naming it and what is known. */
function onlyKeys(file: string, map: Record<string, unknown>, known: readonly string[], what: string): void {
  const bad = Object.keys(map).find((k) => !known.includes(k));
  if (bad !== undefined) throw testFileError(file, map, bad, `unknown key '${bad}' in ${what} (known: ${known.join(', ')})`);
}

function text(file: string, map: Record<string, unknown>, key: string, what: string): string {
  const v = map[key];
  if (typeof v !== 'string' || v === '') throw testFileError(file, map, key, `${what}: '${key}' must be a non-empty string`);
  return v;
}

/** The folder relative paths in the file are read from ('-': the working directory). */
function baseOf(file: string): string {
  return file === '-' ? process.cwd() : dirname(resolve(file));
}

/** Checks a unit-test document (isUnitDocument holds) and resolves its paths. */
export function readUnitFile(file: string, doc: Record<string, unknown>): UnitFile {
  onlyKeys(file, doc, TOP_KEYS, 'a unit-test file');
  let rules: string[] | undefined;
  if (doc.rules !== undefined) {
    const list = doc.rules;
    if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && p !== '')) {
      throw testFileError(file, doc, 'rules', "'rules' must be a non-empty list of rules files or directories (relative to this file)");
    }
    rules = list.map((p: string) => resolve(baseOf(file), p));
  }
  const ruleMatching = doc.ruleMatching ?? 'first';
  if (ruleMatching !== 'first' && ruleMatching !== 'all') throw testFileError(file, doc, 'ruleMatching', `'ruleMatching' must be first or all, not ${JSON.stringify(ruleMatching)}`);
  const list = doc.unitTests;
  if (!Array.isArray(list)) throw testFileError(file, doc, 'unitTests', "'unitTests' must be a list of tests");
  const names = new Set<string>();
  const tests = list.map((t, i) => {
    const test = readTest(file, list, i, t);
    if (names.has(test.name)) throw testFileError(file, t, 'name', `two tests are named '${test.name}'`);
    names.add(test.name);
    return test;
  });
  return { rules, ruleMatching, tests };
}

function readTest(file: string, list: unknown[], index: number, t: unknown): UnitTest {
  if (!isMap(t)) throw testFileError(file, list, index, `unitTests[${index}]: a test must be a map`);
  const where = `unitTests[${index}]`;
  onlyKeys(file, t, TEST_KEYS, `test ${where}`);
  const name = text(file, t, 'name', where);
  const given = INPUT_KEYS.filter((k) => t[k] !== undefined);
  if (given.length !== 1) throw testFileError(file, t, given[1], `test '${name}': give exactly one of event, auditEvent, file (found ${given.length === 0 ? 'none' : given.join(', ')})`);
  const format = t.format ?? (t.auditEvent !== undefined ? 'audit' : 'fields');
  if (format !== 'fields' && format !== 'audit') throw testFileError(file, t, 'format', `test '${name}': 'format' must be fields or audit, not ${JSON.stringify(format)}`);
  if (t.format !== undefined && t.file === undefined) throw testFileError(file, t, 'format', `test '${name}': 'format' applies to 'file' only (event is a field event, auditEvent an audit event)`);
  let input: EventInput;
  if (t.file !== undefined) input = { kind: 'file', format, path: resolve(baseOf(file), text(file, t, 'file', `test '${name}'`)) };
  else {
    const key = given[0]!;
    if (!isMap(t[key])) throw testFileError(file, t, key, `test '${name}': '${key}' must be a map (${key === 'event' ? 'a field event: {source, time, fields}' : 'an audit.k8s.io/v1 Event or EventList'})`);
    input = { kind: 'inline', format, value: t[key] };
  }
  const exp = t.expect;
  if (!Array.isArray(exp)) throw testFileError(file, t, 'expect', `test '${name}': 'expect' must be a list of the alerts expected ([] for none)`);
  const expect = exp.map((e, j) => readExpected(file, exp, j, e, name));
  const rule = t.rule === undefined ? expect[0]?.rule : text(file, t, 'rule', `test '${name}'`);
  return { name, rule, input, expect, where: locate(file, t) };
}

function readExpected(file: string, list: unknown[], index: number, e: unknown, test: string): ExpectedAlert {
  const what = `test '${test}', expect[${index}]`;
  if (!isMap(e)) throw testFileError(file, list, index, `${what}: an expected alert must be a map with at least 'rule'`);
  onlyKeys(file, e, EXPECT_KEYS, what);
  const out: ExpectedAlert = { rule: text(file, e, 'rule', what) };
  if (e.priority !== undefined) {
    out.priority = text(file, e, 'priority', what);
    if (!parsePriority(out.priority)) throw testFileError(file, e, 'priority', `${what}: unknown priority '${out.priority}'`);
  }
  if (e.source !== undefined) out.source = text(file, e, 'source', what);
  if (e.outputFields !== undefined) {
    if (!isMap(e.outputFields)) throw testFileError(file, e, 'outputFields', `${what}: 'outputFields' must be a map of field to value`);
    out.outputFields = e.outputFields;
  }
  return out;
}
