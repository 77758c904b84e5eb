// `ka.uri.param[key]`: the first value of a query parameter of the request URI, decoded as Go's
// url.ParseQuery does (the k8saudit plugin's implementation). Any malformed pair (a bad `%`
// escape, a `;` in a key) makes ParseQuery fail, and then the field is missing.

/** Go's url.QueryUnescape: `+` is a blank, `%XX` a byte; undefined on a bad escape. */
function queryUnescape(s: string): string | undefined {
  if (!s.includes('%') && !s.includes('+')) return s;
  const bytes: number[] = [];
  const raw = Buffer.from(s, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === 0x2b) {
      bytes.push(0x20);
    } else if (c === 0x25) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(c);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The first value of `key` in the query of `uri`, or undefined. */
export function uriParam(uri: string, key: string): string | undefined {
  const q = uri.indexOf('?');
  if (q < 0) return undefined;
  let query = uri.slice(q + 1);
  const hash = query.indexOf('#');
  if (hash >= 0) query = query.slice(0, hash);
  let found: string | undefined;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    if (rawKey.includes(';')) return undefined;
    const k = queryUnescape(rawKey);
    const v = queryUnescape(eq < 0 ? '' : pair.slice(eq + 1));
    if (k === undefined || v === undefined) return undefined;
    if (k === key && found === undefined) found = v;
  }
  return found;
}
