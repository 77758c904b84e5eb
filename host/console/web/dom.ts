// DOM helpers of the console's pages: elements built from a tag, attributes and children (text is
// always set as text, never parsed as HTML, so alert contents cannot inject markup), SVG elements
// for the charts, and the formatting of times and numbers every page shares.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

function apply(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

function nodesOf(children: Child[]): (Node | string)[] {
  return children.filter((c) => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'number' ? String(c) : (c as Node | string)));
}

/** An HTML element: `h('a', { href: '#/events' }, 'Events')`; attributes `onclick` etc. add listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  el.append(...nodesOf(children));
  return el;
}

/** An SVG element (charts are drawn as inline SVG). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(el, attrs);
  el.append(...nodesOf(children));
  return el;
}

/** An RFC 3339 time (nanoseconds allowed) as `2026-01-02 03:04:05 UTC`. */
export function formatTime(rfc3339: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(rfc3339);
  return m ? `${m[1]} ${m[2]} UTC` : rfc3339;
}

/** Milliseconds since the epoch of an RFC 3339 time with up to nanoseconds (Date.parse takes milliseconds). */
export function timeMs(rfc3339: string): number {
  return Date.parse(rfc3339.replace(/(\.\d{3})\d+/, '$1'));
}

/** A count with thousands separators. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** A labelled form control: the label names the control by its id. */
export function field(label: string, control: HTMLElement & { id: string }): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}

/** Falco's priorities, most severe first. */
export const PRIORITIES = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug'] as const;

/** A priority badge, coloured by its class. */
export function priorityBadge(priority: string): HTMLElement {
  return h('span', { class: `prio p-${priority.toLowerCase()}` }, priority);
}

/** The time ranges the pages offer: falcosidekick-ui's `since` values, and a bucket width (seconds) for timelines. */
export const RANGES: ReadonlyArray<{ since: string; label: string; bucket: number }> = [
  { since: '5min', label: 'Last 5 minutes', bucket: 10 },
  { since: '1h', label: 'Last hour', bucket: 60 },
  { since: '24h', label: 'Last 24 hours', bucket: 1800 },
  { since: '7d', label: 'Last 7 days', bucket: 6 * 3600 },
  { since: '30d', label: 'Last 30 days', bucket: 86400 },
  { since: '1y', label: 'Last year', bucket: 7 * 86400 },
  { since: '2y', label: 'Last 2 years', bucket: 14 * 86400 },
];

/** A select of RANGES with `since` chosen. */
export function rangeSelect(id: string, since: string): HTMLSelectElement {
  return h('select', { id, name: 'since' }, ...RANGES.map((r) => h('option', { value: r.since, selected: r.since === since }, r.label)));
}
