// The query parameters of the alert routes (docs/console.md), falcosidekick-ui's names where it
// has them: `priority`, `source`, `rule`, `tags`, `filter` (free text over the output),
// `since`, `page`, `limit`, plus ours: `min_priority`, `hostname`, `container_id`,
// `container_name`, `container_image`, `pod`, `namespace`, `until`, `interval` (time buckets).
// List parameters take comma-separated values (any of them matches), as falcosidekick-ui's.
// Consumes the parsed query; produces an AlertFilter and paging, or every problem in one 400.
import { parsePriority, prioritySeverity, PRIORITIES } from '../../engine/priority.js';
import { nowNs, parseDuration, parseRfc3339 } from '../../output/time.js';
import type { AlertFilter } from '../db/index.js';
import { invalidParams, type ApiError } from '../errors.js';

/** Most alerts one page holds. */
const MAX_LIMIT = 1000;

/** Parameters every alert route accepts besides the filters: credentials and falcosidekick-ui's `pretty`. */
const IGNORED = new Set(['private_token', 'access_token', 'pretty']);

/** List parameters and the filter key each fills. */
const LIST_PARAMS: Record<string, keyof AlertFilter> = {
  source: 'sources',
  rule: 'rules',
  hostname: 'hostnames',
  tags: 'tags',
  container_id: 'containerIds',
  container_name: 'containerNames',
  container_image: 'containerImages',
  pod: 'pods',
  namespace: 'namespaces',
};

/** A checked request: the filter, paging and the time bucket width. */
export interface AlertQuery {
  filter: AlertFilter;
  page: number;
  limit: number;
  bucketNs: bigint;
}

/** `since`/`until`: an RFC 3339 time, or a duration before now (falcosidekick-ui's `since`: 5min, 24h, 2y). */
function timeParam(name: string, v: string, problems: string[]): bigint | undefined {
  const at = parseRfc3339(v);
  if (at !== undefined) return at;
  const s = parseDuration(v);
  if (s !== undefined) return nowNs() - BigInt(s) * 1_000_000_000n;
  problems.push(`${name} ${JSON.stringify(v)} is neither an RFC 3339 time (2026-01-02T03:04:05Z) nor a duration before now (30s, 5min, 24h, 7d, 1M, 2y)`);
  return undefined;
}

function wholeNumber(name: string, v: string, min: number, max: number, problems: string[]): number | undefined {
  if (/^\d{1,9}$/.test(v) && Number(v) >= min && Number(v) <= max) return Number(v);
  problems.push(`${name} ${JSON.stringify(v)} must be a whole number from ${min} to ${max}`);
  return undefined;
}

function priorityOf(name: string, v: string, problems: string[]): number | undefined {
  const p = parsePriority(v.trim());
  if (p) return prioritySeverity(p);
  problems.push(`${name} ${JSON.stringify(v)} is not a priority (${PRIORITIES.join(', ')})`);
  return undefined;
}

/** Checks the query of an alert route; `allowed` names the parameters beyond the filters (paging, interval). */
export function alertQueryOf(query: unknown, allowed: ReadonlyArray<'page' | 'limit' | 'interval'> = []): AlertQuery | ApiError {
  const q = (query ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const filter: AlertFilter = {};
  const out: AlertQuery = { filter, page: 1, limit: 100, bucketNs: 3_600_000_000_000n };
  for (const [name, raw] of Object.entries(q)) {
    if (IGNORED.has(name)) continue;
    if (typeof raw !== 'string') {
      problems.push(`${name} is given more than once (list values are comma-separated: ${name}=a,b)`);
      continue;
    }
    // falcosidekick-ui's UI sends "null" for an unset filter
    const v = raw === 'null' ? '' : raw;
    const list = LIST_PARAMS[name];
    if (list) {
      const values = v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
      if (values.length > 0) (filter[list] as string[]) = values;
    } else if (v === '') continue;
    else if (name === 'priority') filter.priorities = v.split(',').flatMap((x) => priorityOf(name, x, problems) ?? []);
    else if (name === 'min_priority') filter.minPriority = priorityOf(name, v, problems);
    else if (name === 'since') filter.sinceNs = timeParam(name, v, problems);
    else if (name === 'until') filter.untilNs = timeParam(name, v, problems);
    else if (name === 'filter') filter.text = v;
    else if (name === 'page' && allowed.includes('page')) out.page = wholeNumber(name, v, 1, 1_000_000, problems) ?? 1;
    else if (name === 'limit' && allowed.includes('limit')) out.limit = wholeNumber(name, v, 1, MAX_LIMIT, problems) ?? 100;
    else if (name === 'interval' && allowed.includes('interval')) {
      const s = parseDuration(v);
      if (s === undefined || s === 0) problems.push(`interval ${JSON.stringify(v)} is not a duration above 0 (1m, 1h, 1d)`);
      else out.bucketNs = BigInt(s) * 1_000_000_000n;
    } else problems.push(`${name} is not a parameter of this route`);
  }
  return problems.length > 0 ? invalidParams(problems) : out;
}
