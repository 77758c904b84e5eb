// Strings the API must refuse at its boundary: PostgreSQL text cannot hold U+0000 ("invalid byte
// sequence for encoding UTF8: 0x00") and jsonb refuses both `\u0000` and a lone surrogate escape
// (`\ud800` without its pair), so such a string reaching a query failed it with a 500 (and an
// ingested event was lost). GitLab refuses a request whose path or parameters hold a null byte
// with 400 "Bad Request" before any other check (Gitlab::Middleware::HandleNullBytes); a lone
// surrogate is refused the same way here. Consumes decoded request values; produces the first
// offending spot, or undefined.

const NUL = '\u0000';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What makes a string unstorable, or undefined when PostgreSQL can hold it. */
export function unstorableText(s: string): 'a null byte' | 'a lone surrogate' | undefined {
  if (s.includes(NUL)) return 'a null byte';
  // Only strings holding a surrogate at all pay for the regex.
  if (/[\uD800-\uDFFF]/.test(s) && LONE_SURROGATE.test(s)) return 'a lone surrogate';
  return undefined;
}

/** What the first unstorable string (a key or a value) of a decoded value holds; the walk is iterative, any depth. */
export function unstorableValue(root: unknown, opts: { allowNul?: boolean } = {}): string | undefined {
  const stack: unknown[] = [root];
  const check = (s: string): string | undefined => {
    const why = unstorableText(s);
    return why === 'a null byte' && opts.allowNul ? undefined : why;
  };
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      const why = check(v);
      if (why) return why;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (typeof v === 'object' && v !== null && !Buffer.isBuffer(v)) {
      for (const [k, x] of Object.entries(v)) {
        const why = check(k);
        if (why) return why;
        stack.push(x);
      }
    }
  }
  return undefined;
}
