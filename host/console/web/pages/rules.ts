// The Rules page: the rules loaded by the engine that serves the console, with source, priority,
// tags, whether enabled, and their figures since it started (events judged, alerts raised). Where
// no engine runs beside the console (rae forwarder), it says so.
import { getJson } from '../api.js';
import { field, formatCount, h, PRIORITIES, priorityBadge } from '../dom.js';
import type { ConsoleRule } from '../../shapes.js';

/** Renders the page. */
export async function rulesPage(main: HTMLElement): Promise<void> {
  main.replaceChildren(h('h1', {}, 'Rules'), h('p', {}, 'Loading…'));
  let got: { engine: boolean; rules: ConsoleRule[] };
  try {
    got = await getJson('/console/api/rules');
  } catch (err) {
    main.replaceChildren(h('h1', {}, 'Rules'), h('p', { class: 'problem', role: 'alert' }, `Could not load the rules: ${(err as Error).message}`));
    return;
  }
  if (!got.engine) {
    main.replaceChildren(h('h1', {}, 'Rules'), h('p', {}, 'No engine runs beside this console: each node engine has its own rules (rae run -L lists them).'));
    return;
  }
  const search = h('input', { id: 'rule-search', type: 'search', autocomplete: 'off' });
  const matched = h('input', { id: 'rule-matched', type: 'checkbox' });
  const summary = h('p', { role: 'status', id: 'rule-count' });
  const body = h('tbody', { id: 'rule-rows' });
  // most matches first, then by priority and name
  const rules = [...got.rules].sort((a, b) => b.matches - a.matches || PRIORITIES.indexOf(a.priority as never) - PRIORITIES.indexOf(b.priority as never) || a.name.localeCompare(b.name));
  const render = () => {
    const needle = search.value.trim().toLowerCase();
    const shown = rules.filter((r) => (!matched.checked || r.matches > 0) && (needle === '' || `${r.name} ${r.source} ${r.tags.join(' ')}`.toLowerCase().includes(needle)));
    summary.textContent = `${shown.length} of ${rules.length} rules (${rules.filter((r) => r.enabled).length} enabled)`;
    body.replaceChildren(
      ...shown.map((r) =>
        h(
          'tr',
          { 'data-rule': r.name, class: r.enabled ? undefined : 'disabled' },
          h('th', { scope: 'row' }, r.name),
          h('td', {}, r.source),
          h('td', {}, priorityBadge(r.priority)),
          h('td', {}, r.tags.join(', ')),
          h('td', {}, r.enabled ? 'yes' : 'no'),
          h('td', { class: 'num matches' }, r.matches > 0 ? h('a', { href: `#/events?rule=${encodeURIComponent(r.name)}` }, formatCount(r.matches)) : '0'),
          h('td', { class: 'num' }, formatCount(r.evaluations)),
        ),
      ),
    );
  };
  search.addEventListener('input', render);
  matched.addEventListener('change', render);
  const head = ['Rule', 'Source', 'Priority', 'Tags', 'Enabled', 'Matches', 'Evaluations'].map((c) => h('th', { scope: 'col' }, c));
  main.replaceChildren(
    h('h1', {}, 'Rules'),
    h('div', { class: 'toolbar' }, field('Find a rule (name, source or tag)', search), h('label', { class: 'check', for: 'rule-matched' }, matched, ' Only rules that matched')),
    summary,
    h('div', { class: 'table-wrap' }, h('table', { class: 'rules' }, h('caption', { class: 'sr-only' }, 'Loaded rules'), h('thead', {}, h('tr', {}, ...head)), body)),
  );
  render();
}
