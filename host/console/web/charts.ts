// The dashboard's charts, drawn as inline SVG (no chart library): a horizontal bar list of counts
// by one field, and a timeline with one line per priority. Every figure is also in the text (the
// counts beside the bars, a legend, the SVG's title), so a screen reader or a test reads it.
import { formatCount, h, PRIORITIES, svg } from './dom.js';

/**
 * Counts by one field (`name`: priority, rule, ...), largest first, as bars; each value is a
 * link to the Events page filtered by it (`href`).
 */
export function barList(name: string, title: string, counts: Record<string, number>, href: (key: string) => string): HTMLElement {
  const order = name === 'priority' ? (a: string, b: string) => PRIORITIES.indexOf(a as never) - PRIORITIES.indexOf(b as never) : (a: string, b: string) => counts[b]! - counts[a]! || a.localeCompare(b);
  const keys = Object.keys(counts).sort(order);
  const max = Math.max(1, ...Object.values(counts));
  const rows = keys.map((k) =>
    h(
      'li',
      { 'data-key': k },
      h('a', { href: href(k), class: 'label', title: `Show the ${k} events` }, k),
      h(
        'span',
        { class: 'track', 'aria-hidden': 'true' },
        svg('svg', { viewBox: '0 0 100 10', preserveAspectRatio: 'none', class: `bar ${name === 'priority' ? `p-${k.toLowerCase()}` : ''}` }, svg('rect', { x: 0, y: 0, height: 10, width: (100 * counts[k]!) / max })),
      ),
      h('span', { class: 'count' }, formatCount(counts[k]!)),
    ),
  );
  return h(
    'section',
    { class: 'card', 'data-chart': name, 'aria-labelledby': `chart-${name}` },
    h('h2', { id: `chart-${name}` }, title),
    keys.length > 0 ? h('ul', { class: 'bars' }, ...rows) : h('p', { class: 'muted' }, 'No alerts in this range.'),
  );
}

/** One priority's counts by time bucket (bucket start in ms, count). */
export interface Series {
  priority: string;
  points: Array<[number, number]>;
}

const W = 600;
const H = 180;
const PAD = { left: 40, right: 10, top: 10, bottom: 24 };

/** A timeline from `fromMs` to `toMs`, one polyline per priority, with a y axis of counts and the range's ends on the x axis. */
export function timeline(series: Series[], fromMs: number, toMs: number, bucketMs: number): HTMLElement {
  const max = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const x = (t: number) => PAD.left + ((t - fromMs) / Math.max(1, toMs - fromMs)) * (W - PAD.left - PAD.right);
  const y = (n: number) => H - PAD.bottom - (n / max) * (H - PAD.top - PAD.bottom);
  const lines = series.map((s) => {
    // every bucket of the range, 0 where none fired, so a line drops to the axis between bursts
    const at = new Map(s.points.map(([t, n]) => [t, n]));
    const pts: string[] = [];
    for (let t = Math.floor(fromMs / bucketMs) * bucketMs; t <= toMs; t += bucketMs) pts.push(`${x(Math.max(t, fromMs)).toFixed(1)},${y(at.get(t) ?? 0).toFixed(1)}`);
    return svg('polyline', { class: `line p-${s.priority.toLowerCase()}`, points: pts.join(' '), fill: 'none' }, svg('title', {}, `${s.priority}: ${s.points.reduce((a, p) => a + p[1], 0)} alerts`));
  });
  const label = (text: string, tx: number, ty: number, anchor: string) => svg('text', { x: tx, y: ty, 'text-anchor': anchor, class: 'axis' }, text);
  const day = (t: number) => new Date(t).toISOString().replace('T', ' ').slice(0, 16);
  const chart = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'timeline', role: 'img', 'aria-label': `Alerts by priority over time: ${series.map((s) => `${s.priority} ${s.points.reduce((a, p) => a + p[1], 0)}`).join(', ') || 'none'}` },
    svg('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, class: 'axis-line' }),
    svg('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, class: 'axis-line' }),
    label(String(max), PAD.left - 4, PAD.top + 8, 'end'),
    label('0', PAD.left - 4, H - PAD.bottom, 'end'),
    label(day(fromMs), PAD.left, H - 6, 'start'),
    label(day(toMs), W - PAD.right, H - 6, 'end'),
    ...lines,
  );
  const legend = h('ul', { class: 'legend' }, ...series.map((s) => h('li', {}, h('span', { class: `swatch p-${s.priority.toLowerCase()}`, 'aria-hidden': 'true' }), s.priority)));
  return h('div', { class: 'timeline-wrap' }, chart, legend);
}
