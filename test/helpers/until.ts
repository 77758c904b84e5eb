// Waiting for an event in tests: polls a reading until it holds, with a deadline wide enough for a
// loaded 2-core machine. Consumes a reader and a predicate; produces the first value that holds.

/** Polls `read` until `ok` holds for its value; fails with the last value after `ms`. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
