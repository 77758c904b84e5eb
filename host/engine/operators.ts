// String and path matching primitives with libsinsp's semantics (reference/falco-language.md
// A.5): fnmatch-style glob without FNM_PATHNAME, pmatch path-prefix with glob components,
// ASCII-only case folding. Used by the reference interpreter.
import { decodeRaw } from './raw-text.js';

/** ASCII-only lower-casing (libsinsp folds ASCII letters only). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** ASCII-only upper-casing. */
export function asciiUpper(s: string): string {
  return s.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 32));
}

/** fnmatch(pattern, s, 0): `*` and `?` also match `/`; `[...]`, `[!...]`, `\` escapes. */
export function globMatch(pattern: string, s: string, casefold = false): boolean {
  const p = casefold ? asciiLower(pattern) : pattern;
  const v = casefold ? asciiLower(s) : s;
  // Iterative matcher with single backtrack point for `*` (linear-ish, no recursion).
  let pi = 0;
  let si = 0;
  let starP = -1;
  let starS = 0;
  while (si < v.length) {
    if (pi < p.length) {
      const c = p[pi]!;
      if (c === '*') {
        starP = pi++;
        starS = si;
        continue;
      }
      if (c === '?') {
        pi++;
        si++;
        continue;
      }
      if (c === '[') {
        const r = matchClass(p, pi, v[si]!);
        if (r.matched) {
          pi = r.next;
          si++;
          continue;
        }
        if (r.next < 0 && v[si] === '[') {
          pi++;
          si++;
          continue;
        }
      } else if (c === '\\' && pi + 1 < p.length) {
        if (p[pi + 1] === v[si]) {
          pi += 2;
          si++;
          continue;
        }
      } else if (c === v[si]) {
        pi++;
        si++;
        continue;
      }
    }
    if (starP >= 0) {
      pi = starP + 1;
      si = ++starS;
      continue;
    }
    return false;
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/** Matches a bracket expression at p[i] against one char; next = index after `]`, or -1 if unterminated. */
function matchClass(p: string, i: number, ch: string): { matched: boolean; next: number } {
  let j = i + 1;
  let negate = false;
  if (p[j] === '!' || p[j] === '^') {
    negate = true;
    j++;
  }
  let matched = false;
  let first = true;
  while (j < p.length && (p[j] !== ']' || first)) {
    first = false;
    let lo = p[j]!;
    if (lo === '\\' && j + 1 < p.length) lo = p[++j]!;
    if (p[j + 1] === '-' && j + 2 < p.length && p[j + 2] !== ']') {
      let hi = p[j + 2]!;
      if (hi === '\\' && j + 3 < p.length) {
        hi = p[j + 3]!;
        j++;
      }
      if (ch >= lo && ch <= hi) matched = true;
      j += 3;
    } else {
      if (ch === lo) matched = true;
      j++;
    }
  }
  if (j >= p.length) return { matched: false, next: -1 };
  return { matched: matched !== negate, next: j + 1 };
}

function pathComponents(path: string): string[] {
  return path.split('/').filter((c) => c.length > 0);
}

/** pmatch: some pattern path is a component-wise prefix of `value` (components may be globs). */
export function pmatch(patterns: readonly string[], value: string): boolean {
  const comps = pathComponents(value);
  for (const p of patterns) {
    const pc = pathComponents(p);
    if (pc.length > comps.length) continue;
    if (pc.every((c, i) => (/[*?[]/.test(c) ? globMatch(c, comps[i]!) : c === comps[i]))) return true;
  }
  return false;
}

/**
 * Decodes standard base64; undefined when the text is not valid base64. Padding may be left
 * out (libsinsp's test: b64(join("W", ("YWFhL", "JiYg"))) = "aaa-bbb"); when present the
 * length is a multiple of 4.
 */
export function b64decode(s: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  if (s.endsWith('=') ? s.length % 4 !== 0 : s.length % 4 === 1) return undefined;
  return decodeRaw(Buffer.from(s, 'base64')); // the decoded bytes, raw (raw-text.ts)
}

/** basename as libsinsp's transformer: '/usr/bin/cat' -> 'cat', '/' and '/a/' -> ''. */
export function basename(s: string): string {
  const i = s.lastIndexOf('/');
  return i < 0 ? s : s.slice(i + 1);
}
