// REST request bodies and query strings, read as GitLab's stack reads them: JSON (UTF-8 only),
// form-urlencoded and multipart/form-data (doc/api/rest: parameters may be sent as form data),
// each producing a flat object of parameters for params.ts. A body that is not what it declares
// is a BodyError (400 "message body does not match declared format"); a percent-escape that is
// not UTF-8 (`%FF`, `%zz`) is malformed, which GitLab's HandleMalformedStrings answers with 400
// "Bad Request" as it does a null byte.

/** A body that does not match its declared format. */
export class BodyError extends Error {
  readonly statusCode = 400;
  readonly code = 'RAE_INVALID_BODY';
}

/** A form body whose text or escapes are not UTF-8 (GitLab: 400 "Bad Request"). */
export class MalformedBodyError extends Error {
  readonly statusCode = 400;
  readonly code = 'RAE_MALFORMED_BODY';
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** Parts a multipart body may have: the endpoints take a handful of parameters. */
const MAX_PARTS = 100;

/** The body as UTF-8 text, or a BodyError when it holds a byte sequence that is not UTF-8. */
export function utf8Text(body: Buffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw new BodyError('body is not UTF-8');
  }
}

/** A JSON body: '' is no parameters (Grape reads no body), else the parsed value. */
export function parseJsonBody(body: Buffer): unknown {
  const text = utf8Text(body);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError('invalid JSON body');
  }
}

function decodeComponent(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** `a=1&b=2` as an object (the last of a repeated name wins), or undefined when an escape is malformed. */
function parseUrlEncoded(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  if (text === '') return out;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = decodeComponent(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined) return undefined;
    out[name] = value;
  }
  return out;
}

/** True when a raw query string holds an escape that is not UTF-8. */
export function malformedQuery(url: string): boolean {
  const q = url.indexOf('?');
  return q !== -1 && parseUrlEncoded(url.slice(q + 1)) === undefined;
}

/** A form-urlencoded body. */
export function parseFormBody(body: Buffer): Record<string, string> {
  let text: string;
  try {
    text = utf8Text(body);
  } catch {
    throw new MalformedBodyError('form body is not UTF-8');
  }
  const params = parseUrlEncoded(text);
  if (!params) throw new MalformedBodyError('malformed escape in a form body');
  return params;
}

/** The boundary of a multipart content type (RFC 2046 §5.1.1: 1 to 70 characters). */
function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/**
 * A multipart/form-data body (RFC 7578): each part's `name` and its content as UTF-8 text (a
 * file part counts as its text: these endpoints take no files). Anything else is a BodyError.
 */
export function parseMultipartBody(body: Buffer, contentType: string): Record<string, string> {
  const boundary = boundaryOf(contentType);
  if (!boundary) throw new BodyError('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const out: Record<string, string> = {};
  let pos = body.indexOf(delimiter);
  if (pos === -1) throw new BodyError('multipart body without its boundary');
  for (let parts = 0; ; parts++) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString('latin1') === '--') return out; // the close delimiter
    if (parts >= MAX_PARTS) throw new BodyError('too many multipart parts');
    if (body.subarray(pos, pos + 2).toString('latin1') !== '\r\n') throw new BodyError('malformed multipart delimiter');
    const headersEnd = body.indexOf('\r\n\r\n', pos);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), pos);
    if (headersEnd === -1 || next === -1 || headersEnd > next) throw new BodyError('truncated multipart part');
    const headers = utf8Text(body.subarray(pos + 2, headersEnd));
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers);
    const name = disposition ? /(?:^|;)\s*name="([^"]*)"/i.exec(disposition[1]!)?.[1] : undefined;
    if (name === undefined) throw new BodyError('multipart part without a form-data name');
    out[name] = utf8Text(body.subarray(headersEnd + 4, next));
    pos = next + 2;
  }
}
