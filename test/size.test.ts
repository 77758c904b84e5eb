// Small rooms stay small (issue 26, "keep it so"): no source file over 600 lines and no function
// over 150 lines, in every tracked (or new, not ignored) .ts, .mjs, .c and .h file. Generated files
// are listed below with the reason. Functions are read with the TypeScript compiler API (.ts,
// .mjs: every function, method, accessor, constructor and arrow function, nested ones included,
// measured from its first to its last line); C by a brace-depth scan over the text without
// comments and literals (a top-level block opened after a `)` is a function body).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 150;

/** Generated files, exempt from both limits, each with its reason. */
const GENERATED: Record<string, string> = {
  'probes/src/vmlinux.h': "the kernel's BTF type dump (bpftool btf dump), the CO-RE probe's view of kernel structs",
};

const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((f) => /\.(ts|mjs|c|h)$/.test(f) && !(f in GENERATED));
const unique = [...new Set(files)];
const textOf = (f: string): string => readFileSync(resolve(ROOT, f), 'utf8');
const linesOf = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** A function over the limit: where, its name and its length. */
type Long = string;

/** The functions of a TypeScript or JavaScript file longer than the limit. */
function longTsFunctions(file: string, text: string): Long[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.mjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const out: Long[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name) ? node.parent.name.text : '(anonymous)';
      if (last - first + 1 > MAX_FUNCTION_LINES) out.push(`${file}:${first + 1} ${name}: ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** C text with comments, string and character literals blanked (newlines kept, so lines still count). */
function blankC(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => m.replace(/[^\n]/g, ' '));
}

/** The function bodies of a C file longer than the limit: top-level blocks opened after a `)`. */
function longCFunctions(file: string, text: string): Long[] {
  const c = blankC(text);
  const out: Long[] = [];
  let depth = 0;
  let line = 1;
  let start = 0;
  let isFunction = false;
  /** The last character at depth 0 that is not blank. */
  let before = '';
  for (const ch of c) {
    if (ch === '\n') line++;
    if (ch === '{') {
      if (depth === 0) {
        start = line;
        isFunction = before === ')';
      }
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0) {
        if (isFunction && line - start + 1 > MAX_FUNCTION_LINES) out.push(`${file}:${start} ${line - start + 1} lines`);
        before = '}';
      }
    } else if (depth === 0 && ch.trim() !== '') {
      before = ch;
    }
  }
  return out;
}

test(`no source file over ${MAX_FILE_LINES} lines (generated ones listed with their reason)`, () => {
  assert.ok(unique.length > 300, `${unique.length} source files read`);
  const long = unique.map((f) => ({ f, n: linesOf(textOf(f)) })).filter((x) => x.n > MAX_FILE_LINES);
  assert.equal(
    long.map((x) => `${x.f}: ${x.n} lines`),
    [],
  );
});

test(`no function over ${MAX_FUNCTION_LINES} lines`, () => {
  const long = unique.flatMap((f) => (/\.[ch]$/.test(f) ? longCFunctions(f, textOf(f)) : longTsFunctions(f, textOf(f))));
  assert.equal(long, []);
});

test('the C scan finds a long function and skips struct initializers and comments', () => {
  const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  x += ${i}; /* { */`).join('\n');
  const c = `struct s { int a; };\nstatic const struct s table[] = {\n${body}\n};\nstatic int f(int x)\n{\n${body}\n  return x; // }\n}\n`;
  assert.equal(longCFunctions('t.c', c), [`t.c:${MAX_FUNCTION_LINES + 5} ${MAX_FUNCTION_LINES + 3} lines`]);
  assert.equal(longTsFunctions('t.ts', `export function f(x: number): number {\n${body.replaceAll('/* { */', '')}\n  return x;\n}\n`), [`t.ts:1 f: ${MAX_FUNCTION_LINES + 3} lines`]);
});

test.run();
