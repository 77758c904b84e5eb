// Text that remembers where each character came from. Conditions are built from YAML scalars
// (folded, quoted), joined by appends, and rewritten by list substitution before parsing; a
// parser offset into the final text still maps back to file:line:col through this.
import type { Position } from './source-text.js';
import type { SourceText } from './source-text.js';

/** An origin: a file and an offset in it. */
export interface Origin {
  src: SourceText;
  offset: number;
}

/** A string with an origin for every character (and one past the end). */
export class MappedText {
  readonly text: string;
  private readonly srcs: SourceText[];
  private readonly srcIdx: Uint16Array;
  private readonly offsets: Int32Array;

  private constructor(text: string, srcs: SourceText[], srcIdx: Uint16Array, offsets: Int32Array) {
    this.text = text;
    this.srcs = srcs;
    this.srcIdx = srcIdx;
    this.offsets = offsets;
  }

  /** Text whose characters all map to one origin (generated text). */
  static at(text: string, origin: Origin): MappedText {
    const n = text.length + 1;
    return new MappedText(text, [origin.src], new Uint16Array(n), new Int32Array(n).fill(origin.offset));
  }

  /**
   * A decoded YAML scalar mapped onto its raw source `src.text[start, end)`: each value character
   * is matched greedily to the next equal raw character (a folded line break matches a newline),
   * so plain, quoted, folded and literal scalars all map exactly except inside escapes.
   */
  static fromScalar(value: string, src: SourceText, start: number, end: number): MappedText {
    const n = value.length + 1;
    const offsets = new Int32Array(n);
    const raw = src.text;
    let j = start;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      let k = j;
      while (k < end && raw.charCodeAt(k) !== c && !(c === 32 && raw.charCodeAt(k) === 10)) k++;
      if (k < end) {
        offsets[i] = k;
        j = k + 1;
      } else {
        offsets[i] = Math.min(j, end);
      }
    }
    offsets[value.length] = Math.min(j, end);
    return new MappedText(value, [src], new Uint16Array(n), offsets);
  }

  /** Concatenation of mapped texts and plain strings (plain strings take the origin just before them). */
  static concat(parts: Array<MappedText | string>): MappedText {
    const text = parts.map((p) => (typeof p === 'string' ? p : p.text)).join('');
    const n = text.length + 1;
    const srcs: SourceText[] = [];
    const srcIdx = new Uint16Array(n);
    const offsets = new Int32Array(n);
    const idxOf = (s: SourceText): number => {
      let i = srcs.indexOf(s);
      if (i < 0) i = srcs.push(s) - 1;
      return i;
    };
    let pos = 0;
    let last: { si: number; off: number } | undefined;
    const firstMapped = parts.find((p): p is MappedText => typeof p !== 'string');
    if (firstMapped) last = { si: idxOf(firstMapped.srcs[firstMapped.srcIdx[0]!]!), off: firstMapped.offsets[0]! };
    for (const p of parts) {
      if (typeof p === 'string') {
        for (let i = 0; i < p.length; i++, pos++) {
          srcIdx[pos] = last?.si ?? 0;
          offsets[pos] = last?.off ?? 0;
        }
        continue;
      }
      for (let i = 0; i < p.text.length; i++, pos++) {
        srcIdx[pos] = idxOf(p.srcs[p.srcIdx[i]!]!);
        offsets[pos] = p.offsets[i]!;
      }
      last = { si: idxOf(p.srcs[p.srcIdx[p.text.length]!]!), off: p.offsets[p.text.length]! };
    }
    srcIdx[pos] = last?.si ?? 0;
    offsets[pos] = last?.off ?? 0;
    if (srcs.length === 0) throw new Error('MappedText.concat needs at least one mapped part');
    return new MappedText(text, srcs, srcIdx, offsets);
  }

  /** The characters [start, end) with their origins. */
  slice(start: number, end: number = this.text.length): MappedText {
    return new MappedText(this.text.slice(start, end), this.srcs, this.srcIdx.slice(start, end + 1), this.offsets.slice(start, end + 1));
  }

  /** Where character `i` came from. */
  origin(i: number): Origin {
    const k = Math.max(0, Math.min(i, this.text.length));
    return { src: this.srcs[this.srcIdx[k]!]!, offset: this.offsets[k]! };
  }

  /** The file position of character `i`. */
  position(i: number): Position {
    const o = this.origin(i);
    return o.src.position(o.offset);
  }
}
