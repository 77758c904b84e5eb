// The Events page: the stored alerts, newest first, with the query API's filters and free text
// (kept in the page's address, so a filtered view can be bookmarked), pages of 50, and live mode:
// new alerts matching the filters are read from the stream and put on top, without a reload.
import { getJson, queryOf, streamAlerts, type Alert } from '../api.js';
import { field, formatCount, formatTime, h, PRIORITIES, priorityBadge, rangeSelect } from '../dom.js';

const PAGE_SIZE = 50;

/** The filters of the form: the query API's parameter, the label, and a list of the values seen (for a datalist) when it has one. */
const TEXT_FILTERS: ReadonlyArray<[string, string, string?]> = [
  ['rule', 'Rule', 'rule'],
  ['source', 'Source', 'source'],
  ['hostname', 'Hostname', 'hostname'],
  ['tags', 'Tags', 'tags'],
  ['container_name', 'Container name'],
  ['container_image', 'Container image'],
  ['pod', 'Pod'],
  ['namespace', 'Namespace'],
];

/** The query API's filters in the page's parameters. */
function filtersOf(params: URLSearchParams): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of ['since', 'priority', 'min_priority', 'filter', ...TEXT_FILTERS.map((f) => f[0])]) out[k] = params.get(k) ?? undefined;
  out.since ??= '24h';
  return out;
}

function prioritySelect(id: string, name: string, chosen: string | undefined, none: string): HTMLSelectElement {
  return h('select', { id, name }, h('option', { value: '' }, none), ...PRIORITIES.map((p) => h('option', { value: p, selected: p === chosen }, p)));
}

function filterForm(filters: Record<string, string | undefined>): HTMLFormElement {
  const text = (name: string, label: string, list?: string) => field(label, h('input', { id: `f-${name}`, name, value: filters[name] ?? '', list: list ? `values-${list}` : undefined, autocomplete: 'off' }));
  return h(
    'form',
    { class: 'filters card', id: 'filters', role: 'search', 'aria-label': 'Filter events' },
    field('Time range', rangeSelect('f-since', filters.since ?? '24h')),
    field('Priority at least', prioritySelect('f-min_priority', 'min_priority', filters.min_priority, 'any')),
    field('Priority', prioritySelect('f-priority', 'priority', filters.priority, 'any')),
    ...TEXT_FILTERS.map(([name, label, list]) => text(name, label, list)),
    field('Text in the output', h('input', { id: 'f-filter', name: 'filter', type: 'search', value: filters.filter ?? '' })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'), h('a', { href: '#/events', class: 'button secondary' }, 'Clear')),
  );
}

/** Datalists of the values seen in the range, for the rule, source, hostname and tags inputs. */
async function fillDatalists(holder: HTMLElement, since: string | undefined): Promise<void> {
  const lists = await Promise.all(
    ['rule', 'source', 'hostname', 'tags'].map(async (g) => {
      const counts = await getJson<{ results: Record<string, number> }>(`/api/v1/events/count/${g}`, { since });
      return h('datalist', { id: `values-${g}` }, ...Object.keys(counts.results).map((v) => h('option', { value: v })));
    }),
  );
  holder.replaceChildren(...lists);
}

/** One alert as a table row; its rule links to the detail. */
function row(a: Alert, fresh = false): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-id': a.id, 'data-rule': a.rule, class: fresh ? 'fresh' : undefined },
    h('td', {}, h('time', { datetime: a.time }, formatTime(a.time))),
    h('td', {}, priorityBadge(a.priority)),
    h('td', {}, h('a', { href: `#/events/${a.id}` }, a.rule)),
    h('td', {}, a.hostname ?? ''),
    h('td', {}, a.source),
    h('td', { class: 'output' }, a.output),
  );
}

/** Renders the page; returns its stop (live mode's stream). */
export function eventsPage(main: HTMLElement, params: URLSearchParams): () => void {
  const filters = filtersOf(params);
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const form = filterForm(filters);
  const datalists = h('div', { hidden: true });
  // live mode puts new alerts on top of the newest page only
  const live = h('input', { type: 'checkbox', id: 'live', disabled: page > 1, title: page > 1 ? 'Live mode shows new alerts on the first page' : undefined });
  const liveState = h('span', { class: 'muted', role: 'status', id: 'live-state' });
  const count = h('span', { role: 'status', id: 'result-count' });
  const body = h('tbody', { id: 'event-rows' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of events' });
  const table = h(
    'div',
    { class: 'table-wrap' },
    h('table', { class: 'events' }, h('caption', { class: 'sr-only' }, 'Alerts, newest first'), h('thead', {}, h('tr', {}, ...['Time', 'Priority', 'Rule', 'Hostname', 'Source', 'Output'].map((c) => h('th', { scope: 'col' }, c)))), body),
  );
  main.replaceChildren(h('h1', {}, 'Events'), form, datalists, h('div', { class: 'toolbar' }, h('label', { class: 'check', for: 'live' }, live, ' Live: show new alerts as they come'), liveState, count), table, pager);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen: Record<string, string> = {};
    for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v.trim() !== '') chosen[k] = v.trim();
    location.hash = `#/events${queryOf(chosen)}`;
  });

  let total = 0;
  // the search counts up to a cap (docs/console.md, "Bounded counts"): past it, "10,000+" and pages without a last one
  let capped = false;
  const showCount = () => {
    count.textContent = `${formatCount(total)}${capped ? '+' : ''} alerts match`;
    count.dataset.total = String(total);
    count.dataset.capped = String(capped);
  };
  let newest: number | undefined;
  const load = async () => {
    const found = await getJson<{ results: Alert[]; statistics: { all: number; all_capped: boolean } }>('/api/v1/events/search', { ...filters, page: String(page), limit: String(PAGE_SIZE) });
    total = found.statistics.all;
    capped = found.statistics.all_capped;
    newest = found.results[0]?.id;
    body.replaceChildren(...found.results.map((a) => row(a)));
    if (found.results.length === 0) body.replaceChildren(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No alerts match.')));
    showCount();
    const last = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const to = (p: number) => `#/events${queryOf({ ...filters, page: String(p) })}`;
    const of = capped ? ` Page ${page} of more than ${formatCount(last)} ` : ` Page ${page} of ${last} `;
    pager.replaceChildren(page > 1 ? h('a', { href: to(page - 1) }, 'Newer') : '', h('span', {}, of), capped || page < last ? h('a', { href: to(page + 1) }, 'Older') : '');
  };
  load().catch((err: Error) => (count.textContent = `Could not search: ${err.message}`));
  fillDatalists(datalists, filters.since).catch(() => {});

  let stream: AbortController | undefined;
  const startLive = async (ctl: AbortController) => {
    // the stream's own filters: since and page do not apply to what comes next
    const streamed = { ...filters, since: undefined };
    while (!ctl.signal.aborted) {
      liveState.textContent = 'Live: connecting';
      try {
        await streamAlerts(
          streamed,
          newest,
          {
            open: () => (liveState.textContent = 'Live: waiting for new alerts'),
            alert: (a) => {
              newest = a.id;
              body.querySelector('td[colspan]')?.closest('tr')?.remove();
              body.prepend(row(a, true));
              total++;
              showCount();
            },
          },
          ctl.signal,
        );
      } catch (err) {
        if (ctl.signal.aborted) return;
        liveState.textContent = `Live: the stream failed (${(err as Error).message}); trying again`;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  };
  live.addEventListener('change', () => {
    stream?.abort();
    stream = undefined;
    if (!live.checked) return void (liveState.textContent = '');
    stream = new AbortController();
    void startLive(stream);
  });
  return () => stream?.abort();
}
