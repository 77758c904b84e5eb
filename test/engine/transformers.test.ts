// join(), concat() and getopt() (and the single-value transformers over their results) on both
// engines, with upstream's inputs and expected values: falcosecurity/libs
// userspace/libsinsp/test/filter_transformer.ut.cpp (TEST_F multivalue_transformer_join,
// multivalue_transformer_concat, multivalue_transformer_with_outer_transformer,
// multivalue_transformer_getopt) and test/filterchecks len_transformer. Each case's event is
// upstream's: an open of /tmp/file_to_run (fd.name, fd.directory = /tmp, evt.num = 1, fd.types =
// (file)). Each condition is loaded through the real front end, then judged by the reference
// interpreter and by the compiled module; both must give upstream's verdict.
//
// getopt: the test file's cases predate libsinsp's final getopt (the `[K]` selector and POSIX
// scanning in sinsp_filtercheck_multivalue_transformer.cpp: options stop at the first non-option,
// an unknown option gives '?', a missing option argument gives ''). Where that implementation
// gives a different verdict than the older test file, the case is listed in GETOPT_CHANGED with
// the implementation's verdict and why.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { Interpreter } from '../../host/engine/interpreter.js';
import { compileAll, compiledMatches, toEvents } from '../../support/differential.js';

const EVENT = { 'evt.type': 'open', 'fd.name': '/tmp/file_to_run', 'fd.directory': '/tmp', 'evt.num': 1, 'fd.types': ['file'] };

const JOIN: Array<[string, boolean]> = [
  ['join(fd.name, (fd.name,fd.directory)) = /tmp/file_to_run/tmp/file_to_run/tmp', true],
  ['join("-", (fd.name,fd.directory)) = /tmp/file_to_run-/tmp', true],
  ['join("-", ("aaa","bbb")) = aaa-bbb', true],
  ['join("->", ("aaa","bbb")) = aaa->bbb', true],
  ['join("->", ("aaa")) = aaa', true],
  ['join("->", (fd.name, "aaa")) = /tmp/file_to_run->aaa', true],
  ['join("->", (fd.name, "aaa", fd.directory)) = /tmp/file_to_run->aaa->/tmp', true],
  ['join("->", (toupper(fd.name), "aaa")) = /TMP/FILE_TO_RUN->aaa', true],
  ['join("->", ( "aaa", toupper(fd.name))) = aaa->/TMP/FILE_TO_RUN', true],
  ['join("-", (fd.directory, join("->", ( "aaa", toupper(fd.name))))) = /tmp-aaa->/TMP/FILE_TO_RUN', true],
  ['join(",", ("aaa","bbb")) = "aaa,bbb"', true],
  ['join(",", ("aaa","bbb")) = "aaa-bbb"', false],
  ['join(",", (evt.num, evt.num)) = "1,1"', true],
  ['join(",", ()) = ""', true],
  ['join(",", ()) = ","', false],
];
const JOIN_ERRORS = ['join() = foo', 'join("-") = foo', 'join("-", "a", "b") = foo', 'join(fd.types, ("a", "b")) = foo', 'join(("a", "b"), ("a", "b")) = foo', 'join(("a", "b"), "a") = foo', 'join("a", "b") = foo'];

const CONCAT: Array<[string, boolean]> = [
  ['concat(fd.name, fd.directory) = /tmp/file_to_run/tmp', true],
  ['concat("aaa", "bbb") = aaabbb', true],
  ['concat("aaa", "bbb", "ccc") = aaabbbccc', true],
  ['concat(fd.name, "aaa") = /tmp/file_to_runaaa', true],
  ['concat(fd.name, "aaa", fd.directory) = /tmp/file_to_runaaa/tmp', true],
  ['concat(toupper(fd.name), "aaa") = /TMP/FILE_TO_RUNaaa', true],
  ['concat("aaa", toupper(fd.name)) = aaa/TMP/FILE_TO_RUN', true],
  ['concat(fd.directory, concat("aaa", toupper(fd.name))) = /tmpaaa/TMP/FILE_TO_RUN', true],
  ['concat("aaa", "bbb") = "aaabbb"', true],
  ['concat("aaa", "bbb") = "aaa-bbb"', false],
];
const CONCAT_ERRORS = ['concat() = foo', 'concat("aaa") = foo', 'concat(fd.types, "a") = foo', 'concat(("a", "b"), "a") = foo', 'concat("a", ("a", "b")) = foo', 'concat(("a", "b"), ("a", "b")) = foo'];

const OUTER: Array<[string, boolean]> = [
  ['toupper(join("-", (fd.name, fd.directory))) = /TMP/FILE_TO_RUN-/TMP', true],
  ['toupper(join("-", ("aaa", "bbb"))) = AAA-BBB', true],
  ['tolower(join("-", (fd.name, fd.directory))) = /tmp/file_to_run-/tmp', true],
  ['tolower(join("-", ("AAA", "BBB"))) = aaa-bbb', true],
  ['len(join("-", (fd.name, fd.directory))) = 21', true],
  ['len(join("-", ("aaa", "bbb"))) = 7', true],
  ['join("-", ("aaa", "bbb")) = "aaa-bbb"', true],
  ['b64(join("W", ("YWFhL", "JiYg"))) = "aaa-bbb"', true],
  ['toupper(tolower(join("-", (fd.name, fd.directory)))) = /TMP/FILE_TO_RUN-/TMP', true],
  ['toupper(join("-", (fd.name, fd.directory))) contains /TMP', true],
  ['toupper(join("-", (fd.name, fd.directory))) startswith /TMP', true],
  ['len(join("-", (fd.name, fd.directory))) > 20', true],
  ['len(join("-", (fd.name, fd.directory))) >= 21', true],
  ['len(join("-", (fd.name, fd.directory))) < 22', true],
  ['toupper(concat(fd.name, fd.directory)) = /TMP/FILE_TO_RUN/TMP', true],
  ['toupper(concat("aaa", "bbb")) = AAABBB', true],
  ['tolower(concat(fd.name, fd.directory)) = /tmp/file_to_run/tmp', true],
  ['tolower(concat("AAA", "BBB")) = aaabbb', true],
  ['len(concat(fd.name, fd.directory)) = 20', true],
  ['len(concat("aaa", "bbb")) = 6', true],
  ['b64(concat("YWFh", "YmJi")) = "aaabbb"', true],
  ['toupper(tolower(concat(fd.name, fd.directory))) = /TMP/FILE_TO_RUN/TMP', true],
  ['toupper(concat(fd.name, fd.directory)) contains /TMP', true],
  ['toupper(concat(fd.name, fd.directory)) startswith /TMP', true],
  ['len(concat(fd.name, fd.directory)) > 19', true],
  ['len(concat(fd.name, fd.directory)) >= 20', true],
  ['len(concat(fd.name, fd.directory)) < 21', true],
  // len_transformer (fd.types = (file) on this open)
  ['len(fd.types) = 1', true],
  ['len(fd.types) > 0', true],
  ['len(fd.types) = 0', false],
  ['len(fd.name) = 16', true],
];

const GETOPT: Array<[string, boolean]> = [
  ['getopt(("-n",""), "n") intersects ("n")', true],
  ['getopt(("-t", "hello"), "t:") intersects ("t", "hello")', true],
  ['getopt(("-nt", "hello"), "nt:") intersects ("n", "t", "hello")', true],
  ['getopt(("-thello"), "t:") intersects ("t", "hello")', true],
  ['getopt(("-n", "-t", "hello"), "nt:") intersects ("n", "t", "hello")', true],
  ['getopt(("-n"), "n") intersects ("t")', false],
  ['getopt(("-n", "--", "-t"), "nt:") intersects ("n")', true],
  ['getopt(("-n", "--", "-t"), "nt:") intersects ("t")', false],
  ['getopt(("-x", "-n"), "n") intersects ("n")', true],
  ['getopt(("-x", "-n"), "n") intersects ("x")', false],
  ['getopt(("-l", "-p", "8080", "-e", "/bin/sh"), "lp:e:") intersects ("l", "p", "e", "8080", "/bin/sh")', true],
  ['getopt(("-lpe", "/bin/sh"), "lp:e:") intersects ("l","p","e")', true],
  ['getopt(("-lpe", "/bin/sh"), "lpe:") intersects ("/bin/sh")', true],
  ['getopt(("-n", "-t"), "") intersects ("n")', false],
  ['getopt(("-n", "-t"), "") intersects ("t")', false],
  ['getopt((""), "n") intersects ("n")', false],
  ['getopt(("arg1", "arg2", "arg3"), "n") intersects ("n")', false],
  ['getopt(("-"), "n") intersects ("n")', false],
  ['getopt(("-t"), "t:") intersects ("")', true],
  ['getopt(("-n", "--", "--"), "n") intersects ("n")', true],
  ['getopt(("--", "-n"), "n") intersects ("n")', false],
  ['getopt(("-n-t"), "nt") intersects ("n", "t")', true],
  ['getopt(("-nat", "hello"), "na:t") intersects ("n", "a", "t")', true],
  ['getopt(("-abcvalue"), "abc:") intersects ("a", "b", "c", "value")', true],
  ['getopt(("-abc", "value"), "abc:") intersects ("a", "b", "c", "value")', true],
  ['getopt(("-n", "-n", "-n"), "n") intersects ("n")', true],
  ['getopt(("-v", "-v", "-v"), "v") intersects ("v")', true],
  ['getopt(("-t", "val1", "-t", "val2"), "t:") intersects ("t", "val1", "val2")', true],
  ['getopt(("-p", "8080"), "p:") intersects ("p", "8080")', true],
  ['getopt(("-p8080"), "p:") intersects ("p", "8080")', true],
  ['getopt(("-n", "42"), "n:") intersects ("n", "42")', true],
  ['getopt(("-t", "-123"), "t:") intersects ("t", "-123")', true],
  ['getopt(("-f", "/etc/passwd"), "f:") intersects ("f", "/etc/passwd")', true],
  ['getopt(("-f", "./relative/path"), "f:") intersects ("f", "./relative/path")', true],
  ['getopt(("-u", "http://example.com:8080/path"), "u:") intersects ("u", "http://example.com:8080/path")', true],
  ['getopt(("-t", ""), "t:") intersects ("t", "")', true],
  ['getopt(("-p", "22", "-i", "keyfile", "user@host"), "p:i:") intersects ("p", "22", "i", "keyfile")', true],
  ['getopt(("-xzf", "file.tar.gz"), "xzf:") intersects ("x", "z", "f", "file.tar.gz")', true],
  ['getopt(("-X", "POST", "-H", "header", "-d", "data", "url"), "X:H:d:") intersects ("X", "POST", "H", "header", "d", "data")', true],
  ['getopt(("-e", "/bin/sh", "attacker.com", "4444"), "e:") intersects ("e", "/bin/sh")', true],
  ['getopt(("-rn", "pattern", "/path"), "rn") intersects ("r", "n")', true],
  ['getopt(("-it", "-p", "8080:80", "-v", "/host:/container", "image"), "itp:v:") intersects ("i", "t", "p", "8080:80", "v", "/host:/container")', true],
  ['getopt(("-name", "*.txt", "-exec", "rm", "{}", ";"), "n:e:") intersects ("n", "*.txt", "e", "rm")', true],
  ['getopt(("-a", "1", "-b", "2", "-c", "3"), "a:b:c:") intersects ("a", "1", "b", "2", "c", "3")', true],
  ['getopt(("-abc"), "abc") intersects ("a", "b", "c")', true],
  ['getopt(("-a", "val", "-b"), "a:b") intersects ("a", "val", "b")', true],
  ['getopt(("-abcdefg"), "abcdefg") intersects ("a", "b", "c", "d", "e", "f", "g")', true],
  ['getopt(("-1", "-2", "-3"), "123") intersects ("1", "2", "3")', true],
  ['getopt(("-a1b2c3"), "a1b2c3") intersects ("a", "1", "b", "2", "c", "3")', true],
  ['getopt(("-t", " "), "t:") intersects ("t", " ")', true],
  ['getopt(("-abcdefghijklmnopqrstuvwxyz"), "abcdefghijklmnopqrstuvwxyz") intersects ("a", "b", "c", "z")', true],
  ['getopt(("-a", "-b", "-c", "-d", "-e", "-f"), "abcdef") intersects ("a", "b", "c", "d", "e", "f")', true],
  ['getopt(("-t", "this_is_a_very_long_argument_value_that_might_test_buffer_handling"), "t:") intersects ("t", "this_is_a_very_long_argument_value_that_might_test_buffer_handling")', true],
];
/** Cases whose verdict libsinsp's final getopt changed (see the header): [condition, verdict now, why]. */
const GETOPT_CHANGED: Array<[string, boolean, string]> = [
  ['getopt(("arg1", "-n", "arg2"), "n") intersects ("n")', false, 'scanning stops at the first non-option (was: skipped)'],
  ['getopt(("-", "-n"), "n") intersects ("n")', false, "'-' is a non-option: scanning stops"],
  ['getopt(("-t"), "t:") intersects ("t")', false, "a missing argument gives '' alone (was: 't', '')"],
  ['getopt(("", "-n", ""), "n") intersects ("n")', false, "'' is a non-option: scanning stops"],
  ['getopt(("file1", "-n", "file2", "-t", "val", "file3"), "nt:") intersects ("n", "t", "val")', false, 'no GNU permutation'],
  ['getopt(("arg1", "arg2", "-a", "arg3", "-b", "arg4", "arg5"), "ab") intersects ("a", "b")', false, 'no GNU permutation'],
  ['getopt(("regular_file", "-f", "another_file"), "f:") intersects ("f", "another_file")', false, 'no GNU permutation'],
];
const GETOPT_ERRORS = [
  'getopt() intersects ("n")',
  'getopt(("a")) intersects ("n")',
  'getopt(("a"), "n", "extra") intersects ("n")',
  'getopt("not_a_list", "n") intersects ("n")',
  'getopt(("-n"), (“n”)) intersects ("n")'.replace(/[“”]/g, '"'),
];
/** The `[K]` selector (the implementation's own comments: last value wins, K itself for a flag, missing when absent). */
const GETOPT_KEY: Array<[string, boolean]> = [
  ['getopt(("-t", "val1", "-t", "val2"), "t:")[t] = val2', true],
  ['getopt(("-nt", "hello"), "nt:")[n] = n', true],
  ['getopt(("-n"), "nt:")[t] exists', false],
  ['getopt(("-t"), "t:")[t] = ""', true],
  ['getopt(("-x", "-tv"), "t:")[t] = v', true],
];

const ALL: Array<[string, boolean]> = [...JOIN, ...CONCAT, ...OUTER, ...GETOPT, ...GETOPT_CHANGED.map(([c, v]) => [c, v] as [string, boolean]), ...GETOPT_KEY];

function load(conds: string[]) {
  const yaml = conds.map((c, i) => `- rule: t${i}\n  desc: d\n  condition: evt.type = open and ${c}\n  output: o\n  priority: WARNING\n`).join('\n');
  return loadRules([{ name: 'transformers.yaml', text: yaml }]);
}

test('join, concat, getopt and outer transformers: upstream verdicts on the interpreter and the compiled module', async () => {
  const loaded = load(ALL.map(([c]) => c));
  assert.ok(
    loaded.ok,
    loaded.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => d.message)
      .join('\n'),
  );
  const rules = loaded.ruleset.rules;
  assert.is(rules.length, ALL.length);
  const events = toEvents([EVENT], 'syscall');
  const interp = new Interpreter();
  const module = await compileAll(rules);
  const compiled = new Set(compiledMatches(module, events).map((m) => Number(m.split(':')[1])));
  ALL.forEach(([cond, want], i) => {
    assert.is(interp.evaluate(rules[i]!.condition, events[0]!.fields), want, `interpreter: ${cond}`);
    assert.is(compiled.has(i), want, `compiled: ${cond}`);
  });
});

test('join, concat and getopt: the argument errors upstream throws are load errors', () => {
  for (const c of [...JOIN_ERRORS, ...CONCAT_ERRORS, ...GETOPT_ERRORS]) {
    const loaded = load([c]);
    assert.not.ok(loaded.ok, c);
    assert.ok(
      loaded.diagnostics.some((d) => d.code === 'LOAD_ERR_COMPILE_CONDITION'),
      c,
    );
  }
  const msg = (c: string) => load([c]).diagnostics.find((d) => d.severity === 'error')?.message;
  assert.is(msg('join("a", "b") = foo'), 'join() second argument must be a list');
  assert.is(msg('concat("aaa") = foo'), 'concat() requires at least 2 arguments');
  assert.is(msg('getopt(("a"), "n")[ab] = x'), 'getopt() field argument must be a single option character');
});

test.run();
