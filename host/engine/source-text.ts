// Source text of one rules file: offsets to 1-based line/column, and the source line for snippets.
// Consumes a file name and its text; produces positions that diagnostics render as file:line:col.

/** One rules file (or any named text) as loaded. */
export interface RulesFile {
  name: string;
  text: string;
}

/** A position in a named text: 1-based line and column, 0-based offset. */
export interface Position {
  name: string;
  line: number;
  column: number;
  offset: number;
}

/** A text with a line index, so positions are computed in O(log lines). */
export class SourceText {
  readonly name: string;
  readonly text: string;
  private readonly lineStarts: number[];

  constructor(name: string, text: string) {
    this.name = name;
    this.text = text;
    this.lineStarts = [0];
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    }
  }

  /** The 1-based line and column of a 0-based offset (clamped into the text). */
  position(offset: number): Position {
    const off = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= off) lo = mid;
      else hi = mid - 1;
    }
    return { name: this.name, line: lo + 1, column: off - this.lineStarts[lo]! + 1, offset: off };
  }

  /** The text of a 1-based line, without its newline. */
  line(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return '';
    const next = this.lineStarts[line];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, '');
  }
}
