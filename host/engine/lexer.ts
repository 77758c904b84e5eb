// Token scanners for the condition language: plain character loops that mirror the anchored
// RE2 (POSIX, leftmost-longest) patterns of libsinsp `filter/parser.cpp`. There is no token
// stream: the parser asks for the token its grammar position expects (reference A.1). Each
// scanner takes the text and a start offset and returns the end offset, or -1 for no match.
// Loops, not regexes, so no input can make them backtrack.

/** libsinsp's blanks (`lex_blank`): exactly space, \t, \b, \r, \n. */
export function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 8 || c === 13 || c === 10;
}

/** POSIX `[[:space:]]`: space, \t, \n, \v, \f, \r (used by `not[[:space:]]+` and bare strings). */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** ASCII letter. */
export function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isWord(c: number): boolean {
  return isAlpha(c) || (c >= 48 && c <= 57) || c === 95;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** End of the blanks starting at `i` (i itself when there are none). */
export function skipBlanks(s: string, i: number): number {
  while (i < s.length && isBlank(s.charCodeAt(i))) i++;
  return i;
}

/** One name component `[a-zA-Z][a-zA-Z0-9_]*`. */
function scanWord(s: string, i: number): number {
  if (i >= s.length || !isAlpha(s.charCodeAt(i))) return -1;
  i++;
  while (i < s.length && isWord(s.charCodeAt(i))) i++;
  return i;
}

/** Identifier `[a-zA-Z]+[a-zA-Z0-9_]*` (a macro or list name). */
export function scanIdentifier(s: string, i: number): number {
  return scanWord(s, i);
}

/** FieldName: at least two components joined by dots, each starting with a letter. */
export function scanFieldName(s: string, i: number): number {
  let end = scanWord(s, i);
  if (end < 0) return -1;
  let dots = 0;
  while (end + 1 < s.length && s.charCodeAt(end) === 46 && isAlpha(s.charCodeAt(end + 1))) {
    end = scanWord(s, end + 1);
    dots++;
  }
  return dots > 0 ? end : -1;
}

/** HexNumber `0[xX][0-9a-fA-F]+`. */
export function scanHexNumber(s: string, i: number): number {
  if (s.charCodeAt(i) !== 48) return -1;
  const x = s.charCodeAt(i + 1);
  if (x !== 120 && x !== 88) return -1;
  let j = i + 2;
  while (j < s.length && isHexDigit(s.charCodeAt(j))) j++;
  return j > i + 2 ? j : -1;
}

/** Number `[+\-]?[0-9]+[\.]?[0-9]*([eE][+\-][0-9]+)?`. */
export function scanNumber(s: string, i: number): number {
  let j = i;
  const sign = s.charCodeAt(j);
  if (sign === 43 || sign === 45) j++;
  const digits = j;
  while (j < s.length && isDigit(s.charCodeAt(j))) j++;
  if (j === digits) return -1;
  if (s.charCodeAt(j) === 46) j++;
  while (j < s.length && isDigit(s.charCodeAt(j))) j++;
  const e = s.charCodeAt(j);
  const es = s.charCodeAt(j + 1);
  if ((e === 101 || e === 69) && (es === 43 || es === 45) && isDigit(s.charCodeAt(j + 2))) {
    j += 3;
    while (j < s.length && isDigit(s.charCodeAt(j))) j++;
  }
  return j;
}

/** BareStr `[^()"'[:space:]=,]+`: a value up to a space, paren, quote, `=` or `,`. */
export function scanBareStr(s: string, i: number): number {
  let j = i;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === 40 || c === 41 || c === 34 || c === 39 || c === 61 || c === 44 || isSpace(c)) break;
    j++;
  }
  return j > i ? j : -1;
}

/** FieldArgBareStr `[^][\"'[:space:]]+`: a field argument up to a bracket, quote or space. */
export function scanFieldArgBareStr(s: string, i: number): number {
  let j = i;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === 91 || c === 93 || c === 34 || c === 39 || isSpace(c)) break;
    j++;
  }
  return j > i ? j : -1;
}

/**
 * A quoted token starting at `i` (on `'` or `"`): it ends at the first delimiter whose
 * immediately preceding raw character is not `\` (so `'a\\'` does not end at its last quote,
 * reference A.2). A NUL ends the scan like the C string it was. Returns the end offset just
 * past the closing delimiter, or -1 when the quote is not closed.
 */
export function scanQuoted(s: string, i: number): number {
  const q = s.charCodeAt(i);
  if (q !== 39 && q !== 34) return -1;
  let prev = 92; // libsinsp starts with prev = '\\' so the opening delimiter never closes
  for (let j = i; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0) return -1;
    if (c === q && prev !== 92) return j + 1;
    prev = c;
  }
  return -1;
}

/** `not` followed by at least one POSIX space (`not[[:space:]]+`); -1 otherwise. */
export function scanNotBlank(s: string, i: number): number {
  if (!s.startsWith('not', i)) return -1;
  let j = i + 3;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  return j > i + 3 ? j : -1;
}
