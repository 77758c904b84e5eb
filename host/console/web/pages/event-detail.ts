// One alert in full: its output, tags, container and pod context, every output field, and the
// raw JSON as stored.
import { getJson, type Alert } from '../api.js';
import { formatTime, h, priorityBadge } from '../dom.js';

/** The output fields that say where the event happened (Falco's container and Kubernetes fields). */
const CONTEXT_FIELDS = ['container.id', 'container.name', 'container.image.repository', 'container.image.tag', 'container.image', 'k8s.pod.name', 'k8s.ns.name', 'ka.target.namespace', 'ka.target.name', 'ka.user.name'];

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function definitions(rows: Array<[string, Node | string]>): HTMLElement {
  return h('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** Renders the alert `id`. */
export async function eventDetailPage(main: HTMLElement, id: string): Promise<void> {
  main.replaceChildren(h('p', {}, 'Loading…'));
  let a: Alert;
  try {
    a = await getJson<Alert>(`/api/v1/events/${encodeURIComponent(id)}`);
  } catch (err) {
    main.replaceChildren(h('p', { class: 'problem', role: 'alert' }, `Could not load alert ${id}: ${(err as Error).message}`), h('a', { href: '#/events' }, 'Back to events'));
    return;
  }
  const fields = a.output_fields ?? {};
  const context = CONTEXT_FIELDS.filter((f) => fields[f] !== undefined && fields[f] !== null && fields[f] !== '').map((f): [string, string] => [f, text(fields[f])]);
  main.replaceChildren(
    h('p', {}, h('a', { href: '#/events' }, '← Back to events')),
    h('h1', { id: 'detail-rule' }, a.rule),
    definitions([
      ['Alert id', String(a.id)],
      ['Time', h('time', { datetime: a.time }, formatTime(a.time))],
      ['Priority', priorityBadge(a.priority)],
      ['Source', a.source],
      ['Hostname', a.hostname ?? ''],
      ['Tags', (a.tags ?? []).join(', ') || 'none'],
    ]),
    h('h2', {}, 'Output'),
    h('pre', { class: 'output', id: 'detail-output' }, a.output),
    h('h2', {}, 'Container and pod'),
    context.length > 0 ? definitions(context) : h('p', { class: 'muted' }, 'No container or pod context (a host process, or metadata not known yet).'),
    h('h2', {}, 'Output fields'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'fields' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Value'))),
        h('tbody', {}, ...Object.entries(fields).map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, text(v))))),
      ),
    ),
    h('h2', {}, 'Raw JSON'),
    h('pre', { class: 'raw', id: 'detail-raw' }, JSON.stringify(a, null, 2)),
  );
}
