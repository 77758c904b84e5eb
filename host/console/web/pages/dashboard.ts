// The dashboard: the total and the counts by priority, rule, source, tag and hostname over a time
// range, and a timeline by priority; it refreshes itself every few seconds while shown.
import { getJson, queryOf } from '../api.js';
import { barList, timeline, type Series } from '../charts.js';
import { field, formatCount, h, PRIORITIES, RANGES, rangeSelect, timeMs } from '../dom.js';

/** How often the dashboard reads the counts again. */
const REFRESH_MS = 5000;

type Counts = { results: Record<string, number>; statistics: { all: number } };

const GROUPS: ReadonlyArray<[string, string]> = [
  ['priority', 'By priority'],
  ['rule', 'By rule'],
  ['source', 'By source'],
  ['tags', 'By tag'],
  ['hostname', 'By hostname'],
];

/** Where a bar of `group` leads: the Events page filtered by its value and the range. */
function eventsHref(group: string, key: string, since: string): string {
  return `#/events${queryOf({ [group === 'priority' ? 'priority' : group]: key, since })}`;
}

async function loadCharts(since: string): Promise<HTMLElement[]> {
  const range = RANGES.find((r) => r.since === since) ?? RANGES[2]!;
  const [total, ...groups] = await Promise.all([getJson<{ statistics: { all: number } }>('/api/v1/events/count', { since }), ...GROUPS.map(([g]) => getJson<Counts>(`/api/v1/events/count/${g}`, { since }))]);
  const byPriority = groups[0]!.results;
  const present = PRIORITIES.filter((p) => (byPriority[p] ?? 0) > 0);
  const series: Series[] = await Promise.all(
    present.map(async (priority) => {
      const t = await getJson<Counts>('/api/v1/events/count/time', { since, priority, interval: String(range.bucket) });
      return { priority, points: Object.entries(t.results).map(([k, n]): [number, number] => [timeMs(k), n]) };
    }),
  );
  const now = Date.now();
  const sinceMs = now - durationMs(since);
  return [
    h(
      'section',
      { class: 'totals card', 'aria-labelledby': 'total-title' },
      h('h2', { id: 'total-title' }, 'Alerts'),
      h('p', { class: 'total' }, h('span', { id: 'total-count', 'data-total': total.statistics.all }, formatCount(total.statistics.all)), ` in ${range.label.toLowerCase()}`),
    ),
    h('section', { class: 'card wide', 'aria-labelledby': 'timeline-title' }, h('h2', { id: 'timeline-title' }, 'Timeline by priority'), timeline(series, sinceMs, now, range.bucket * 1000)),
    ...GROUPS.map(([g, title], i) => barList(g, title, groups[i]!.results, (k) => eventsHref(g, k, since))),
  ];
}

/** A `since` value in milliseconds (the units RANGES uses). */
function durationMs(since: string): number {
  const m = /^(\d+)(min|h|d|y)$/.exec(since);
  const unit = { min: 60, h: 3600, d: 86400, y: 31_536_000 }[(m?.[2] ?? 'h') as 'min' | 'h' | 'd' | 'y'];
  return Number(m?.[1] ?? 24) * unit * 1000;
}

/** Renders the dashboard; returns its stop (the refresh timer). */
export function dashboardPage(main: HTMLElement, params: URLSearchParams): () => void {
  let since = params.get('since') ?? '24h';
  const select = rangeSelect('range', since);
  const status = h('span', { class: 'muted', role: 'status', id: 'dashboard-status' });
  const refresh = h('button', { type: 'button' }, 'Refresh');
  const charts = h('div', { class: 'grid', id: 'charts', 'aria-live': 'off' });
  main.replaceChildren(h('h1', {}, 'Dashboard'), h('div', { class: 'toolbar' }, field('Time range', select), refresh, status), charts);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const load = async () => {
    clearTimeout(timer);
    try {
      const fresh = await loadCharts(since);
      // a keyboard user on a bar's link keeps the focus across the refresh
      const focused = charts.contains(document.activeElement) ? document.activeElement?.getAttribute('href') : null;
      charts.replaceChildren(...fresh);
      if (focused) charts.querySelector<HTMLElement>(`a[href="${CSS.escape(focused)}"]`)?.focus();
      status.textContent = `Updated ${new Date().toISOString().slice(11, 19)} UTC`;
    } catch (err) {
      status.textContent = `Could not load the counts: ${(err as Error).message}`;
    }
    if (!stopped) timer = setTimeout(load, REFRESH_MS);
  };
  select.addEventListener('change', () => {
    since = select.value;
    history.replaceState(null, '', `#/dashboard${queryOf({ since })}`);
    void load();
  });
  refresh.addEventListener('click', () => void load());
  void load();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
