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
  let end = uri.indexOf('#', q + 1);
  if (end < 0) end = uri.length;
  return plainQuery(uri, q + 1, end) ? plainParam(uri, q + 1, end, key) : parsedParam(uri.slice(q + 1, end), key);
}

/** True when uri[from, to) has no `%`, `+` or `;`: no pair of it is malformed and none needs unescaping. */
function plainQuery(uri: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = uri.charCodeAt(i);
    if (c === 0x25 || c === 0x2b || c === 0x3b) return false;
  }
  return true;
}

/** uriParam of a plain query (plainQuery), uri[from, to): the first pair named `key` read in place, nothing else built. */
function plainParam(uri: string, from: number, to: number, key: string): string | undefined {
  for (let at = from; at < to; ) {
    let amp = uri.indexOf('&', at);
    if (amp < 0 || amp > to) amp = to;
    if (amp === at) {
      at++; // an empty pair
      continue;
    }
    const eq = uri.indexOf('=', at);
    const keyEnd = eq < 0 || eq > amp ? amp : eq;
    if (keyEnd - at === key.length && uri.startsWith(key, at)) return keyEnd === amp ? '' : uri.slice(keyEnd + 1, amp);
    at = amp + 1;
  }
  return undefined;
}

/** uriParam of any query: each pair unescaped, and none found when one of them is malformed. */
function parsedParam(query: string, key: string): string | undefined {
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
