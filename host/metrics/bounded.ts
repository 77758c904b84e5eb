// A label whose values come from outside (rule names, host names, sources of POST / payloads)
// but must stay a bounded set: values on the allow-list always pass, up to `maxExtra` other
// distinct values are admitted first come, and anything beyond is counted under OVERFLOW.
// Consumes raw label values; produces the value to use.

/** The value used once a label has reached its limit. */
const OVERFLOW = '(other)';

/** One bounded label. */
export class BoundedLabel {
  private readonly allowed = new Set<string>();
  private readonly extra = new Set<string>();

  constructor(
    readonly maxExtra: number,
    private readonly onOverflow: () => void,
  ) {}

  /** Adds values that always pass (e.g. the names of the loaded rules). */
  allow(values: Iterable<string>): void {
    for (const v of values) this.allowed.add(v);
  }

  /** The value to put on the series for `v`. */
  value(v: string): string {
    if (this.allowed.has(v) || this.extra.has(v)) return v;
    if (this.extra.size < this.maxExtra) {
      this.extra.add(v);
      return v;
    }
    this.onOverflow();
    return OVERFLOW;
  }
}
