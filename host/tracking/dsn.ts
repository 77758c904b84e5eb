// A Sentry-protocol DSN (`<scheme>://<public key>@<host>[:port]<path>/<project id>`, as GitLab's
// errtrack_dsn and Sentry's own) to where its envelopes go: `<scheme>://<host><path>/api/<project
// id>/envelope/` with the public key in X-Sentry-Auth (develop.sentry.dev/sdk/overview/).
// Consumes the configured errorTracking.dsn; produces the target, or a problem to report.

/** Where a DSN's events go. */
export interface DsnTarget {
  envelopeUrl: string;
  publicKey: string;
}

/** The target of a DSN, or the problem with it (what is wrong, for `errorTracking.dsn: ...`). */
export function parseDsn(dsn: string): DsnTarget | { problem: string } {
  let url: URL;
  try {
    url = new URL(dsn);
  } catch {
    return { problem: `expected a DSN such as https://KEY@host/errortracking/api/v1/projects/1, got ${JSON.stringify(dsn)}` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `expected an https or http DSN, got ${url.protocol}` };
  if (url.username === '') return { problem: 'the DSN has no public key (the part before @)' };
  const m = /^(.*)\/([^/]+)\/?$/.exec(url.pathname);
  if (!m?.[2]) return { problem: 'the DSN has no project id (its last path segment)' };
  return { envelopeUrl: `${url.protocol}//${url.host}${m[1]}/api/${m[2]}/envelope/`, publicKey: decodeURIComponent(url.username) };
}
