// The Errors page, over the API's error tracking (docs/api.md): a project's errors by status,
// and one error's detail with the stack trace of its latest event and the status buttons
// (resolve, ignore, unresolve: Developer and above, as the API decides).
import { getJson, putJson, queryOf } from '../api.js';
import { field, formatCount, formatTime, h } from '../dom.js';

type Project = { id: number; path: string };
type ErrorRow = { id: number; name: string; description: string; actor: string; status: string; event_count: number; last_seen_at: string };
type Frame = { filename: string | null; function: string | null; module: string | null; lineNo: number | null; colNo: number | null; in_app: boolean | null; context: Array<[number, string]> };
type ErrorEvent = { occurred_at: string; environment: string | null; exception: { type: string | null; value: string | null } | null; stack_trace_entries: Frame[] };
type ErrorDetail = { id: number; title: string; culprit: string; status: string; event_count: number; user_count: number; first_seen_at: string; last_seen_at: string; environment: string | null };

const STATUSES = ['unresolved', 'resolved', 'ignored'];
const errorsPath = (p: number) => `/api/v4/projects/${p}/error_tracking/errors`;

/** Renders a project's list (`project`, `status` from the page's parameters; the first project by default). */
export async function errorsPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  main.replaceChildren(h('h1', {}, 'Errors'), h('p', {}, 'Loading…'));
  const { projects } = await getJson<{ projects: Project[] }>('/console/api/projects');
  if (projects.length === 0) return void main.replaceChildren(h('h1', {}, 'Errors'), h('p', {}, 'No error-tracking project is visible to you (rae admin project create GROUP/NAME).'));
  const project = Number(params.get('project') ?? projects[0]!.id);
  const status = STATUSES.includes(params.get('status') ?? '') ? params.get('status')! : 'unresolved';
  const projectSelect = h('select', { id: 'err-project', name: 'project' }, ...projects.map((p) => h('option', { value: p.id, selected: p.id === project }, p.path)));
  const statusSelect = h('select', { id: 'err-status', name: 'status' }, ...STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)));
  const go = () => (location.hash = `#/errors${queryOf({ project: projectSelect.value, status: statusSelect.value })}`);
  projectSelect.addEventListener('change', go);
  statusSelect.addEventListener('change', go);
  const rows = await getJson<ErrorRow[]>(errorsPath(project), { status, per_page: '100' });
  const body = rows.map((e) =>
    h(
      'tr',
      { 'data-error': e.id },
      h('th', { scope: 'row' }, h('a', { href: `#/errors/${project}/${e.id}` }, e.description ? `${e.name}: ${e.description}` : e.name)),
      h('td', {}, e.actor),
      h('td', { class: 'num' }, formatCount(e.event_count)),
      h('td', {}, formatTime(e.last_seen_at)),
    ),
  );
  main.replaceChildren(
    h('h1', {}, 'Errors'),
    h('div', { class: 'toolbar' }, field('Project', projectSelect), field('Status', statusSelect)),
    rows.length === 0
      ? h('p', { class: 'muted', id: 'error-none' }, `No ${status} errors.`)
      : h(
          'div',
          { class: 'table-wrap' },
          h('table', {}, h('caption', { class: 'sr-only' }, 'Errors'), h('thead', {}, h('tr', {}, ...['Error', 'Culprit', 'Events', 'Last seen'].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', { id: 'error-rows' }, ...body)),
        ),
  );
}

function frameView(f: Frame): HTMLElement {
  const where = `${f.filename ?? f.module ?? '?'}${f.lineNo !== null ? `:${f.lineNo}` : ''}${f.colNo !== null ? `:${f.colNo}` : ''}`;
  const code = f.context.map(([n, line]) => h('span', { class: n === f.lineNo ? 'hit' : undefined }, `${String(n).padStart(5)}  ${line}\n`));
  return h('li', { class: f.in_app ? 'in-app' : undefined }, h('code', {}, `${f.function ?? '(anonymous)'} at ${where}`), code.length > 0 ? h('pre', { class: 'context' }, ...code) : '');
}

/** Renders one error: its facts, status buttons and the latest event's stack trace (the crash frame first). */
export async function errorDetailPage(main: HTMLElement, project: string, id: string): Promise<void> {
  const path = `${errorsPath(Number(project))}/${encodeURIComponent(id)}`;
  const [detail, latest] = await Promise.all([getJson<ErrorDetail>(path), getJson<ErrorEvent>(`${path}/latest_event`).catch(() => undefined)]);
  const problem = h('p', { class: 'problem', role: 'alert' });
  const button = (label: string, status: string) =>
    h(
      'button',
      {
        type: 'button',
        onclick: async () => {
          try {
            await putJson(path, { status });
            await errorDetailPage(main, project, id);
          } catch (err) {
            problem.textContent = `Could not set the status: ${(err as Error).message}`;
          }
        },
      },
      label,
    );
  const actions = [detail.status !== 'resolved' && button('Resolve', 'resolved'), detail.status !== 'ignored' && button('Ignore', 'ignored'), detail.status !== 'unresolved' && button('Unresolve', 'unresolved')];
  const frames = [...(latest?.stack_trace_entries ?? [])].reverse();
  main.replaceChildren(
    h('p', {}, h('a', { href: `#/errors${queryOf({ project })}` }, '← Back to errors')),
    h('h1', {}, detail.title),
    h(
      'dl',
      { class: 'facts' },
      ...[
        ['Status', detail.status],
        ['Culprit', detail.culprit],
        ['Events', formatCount(detail.event_count)],
        ['Users', formatCount(detail.user_count)],
        ['First seen', formatTime(detail.first_seen_at)],
        ['Last seen', formatTime(detail.last_seen_at)],
        ['Environment', detail.environment ?? ''],
      ].flatMap(([k, v]) => [h('dt', {}, k!), h('dd', { 'data-fact': k!.toLowerCase() }, v!)]),
    ),
    h('div', { class: 'actions' }, ...actions),
    problem,
    h('h2', {}, 'Stack trace of the latest event'),
    latest?.exception ? h('p', {}, h('strong', {}, latest.exception.type ?? ''), ` ${latest.exception.value ?? ''}`) : '',
    frames.length > 0 ? h('ol', { class: 'frames' }, ...frames.map(frameView)) : h('p', { class: 'muted' }, 'The latest event has no stack trace.'),
  );
}
