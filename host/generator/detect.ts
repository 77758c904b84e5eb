// Whether the engine detected what the generator did: the forwarder's /metrics counts every
// alert by rule (enginesecurity_enginesidekick_engine_events_total{rule=...}, host/metrics/names.ts),
// so a rule whose count grew while the actions ran fired. Consumes the Prometheus text
// exposition; produces a count per rule. A rule that fired for another process during the run
// counts too: the answer is "the rule fired", not "this action's event matched".
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The counter of alerts (every detection) on the forwarder's /metrics. */
const ALERTS_METRIC = 'enginesecurity_enginesidekick_engine_events_total';

/** Alerts counted per rule in a Prometheus text exposition. */
export function alertCountsOf(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${ALERTS_METRIC}{`)) continue;
    const close = line.lastIndexOf('}');
    const rule = labelValue(line.slice(ALERTS_METRIC.length + 1, close), 'rule');
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    if (rule !== undefined && Number.isFinite(value)) counts.set(rule, (counts.get(rule) ?? 0) + value);
  }
  return counts;
}

/** One label's value in `a="x",b="y"` (values escape \\, \" and \n as the exposition format says). */
function labelValue(labels: string, name: string): string | undefined {
  let i = 0;
  while (i < labels.length) {
    const eq = labels.indexOf('="', i);
    if (eq < 0) return undefined;
    const key = labels.slice(i, eq).replace(/^,/, '').trim();
    let value = '';
    let j = eq + 2;
    for (; j < labels.length && labels[j] !== '"'; j++) {
      if (labels[j] === '\\' && j + 1 < labels.length) {
        j++;
        value += labels[j] === 'n' ? '\n' : labels[j];
      } else value += labels[j];
    }
    if (key === name) return value;
    i = j + 1;
  }
  return undefined;
}

/** Reads alert counts per rule from a /metrics URL; rejects with the reason when it cannot. */
export function fetchAlertCounts(url: string, timeoutMs = 5_000): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(alertCountsOf(body)) : reject(new Error(`${url} answered ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`cannot read ${url}: ${err.message}`)));
    req.end();
  });
}

/** The rules of `rules` whose count in `now` is above `before`. */
export function firedSince(before: ReadonlyMap<string, number>, now: ReadonlyMap<string, number>, rules: Iterable<string>): Set<string> {
  const fired = new Set<string>();
  for (const r of rules) if ((now.get(r) ?? 0) > (before.get(r) ?? 0)) fired.add(r);
  return fired;
}
