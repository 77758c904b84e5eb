// The common behaviour of every destination, around its Sender: falcosidekick's per-output minimum
// priority (the /test alert always passes), customfields and templatedfields added to the
// alert's output_fields (global ones first, then the output's own), and the bounded queue with
// retries (queue.ts). Consumes a resolved table row; produces an Output.
import { priorityNumber, parsePriority } from '../../engine/priority.js';
import { TEST_RULE, type Alert, type OutputFieldValue } from '../alert.js';
import { createQueuedOutput } from '../queue.js';
import type { OutputSettings } from './settings.js';
import type { GlobalFields } from './table.js';
import { parseTemplate, type Template } from './template.js';
import { Delivery, type Output, type OutputContext, type Sender } from './types.js';
import type { Destination } from '../../metrics/index.js';

/** How an alert is adapted for one output; identity when no field is configured. */
export type AlertAdapter = (d: Delivery) => Delivery;

/** Builds the adapter adding custom fields (verbatim) and templated fields (rendered from the alert's fields). */
export function fieldAdapter(custom: Record<string, string>, templated: Record<string, string>): AlertAdapter {
  const customEntries = Object.entries(custom);
  const templates: Array<[string, Template]> = Object.entries(templated).map(([k, t]) => [k, parseTemplate(t)]);
  if (customEntries.length === 0 && templates.length === 0) return (d) => d;
  return (d) => {
    const fields: Record<string, OutputFieldValue> = { ...d.alert.outputFields };
    const set = (k: string, v: OutputFieldValue) => Object.defineProperty(fields, k, { value: v, enumerable: true, writable: true, configurable: true });
    for (const [k, v] of customEntries) set(k, v);
    const before = { ...fields }; // falcosidekick renders every template against the fields before templating
    for (const [k, t] of templates) set(k, t(before));
    const alert: Alert = { ...d.alert, outputFields: fields };
    return new Delivery(alert, d.format);
  };
}

/** The common settings' effect: a priority gate and the field adapter, in front of a queued sender. */
export function createOutput(destination: Destination, settings: OutputSettings, sender: Sender, ctx: OutputContext, global: GlobalFields, onDrop?: (destination: Destination) => void): Output {
  const min = parsePriority(settings.string('minimumpriority'));
  const minNumber = min ? priorityNumber(min) : 0;
  const adapt = fieldAdapter({ ...global.customfields, ...settings.map('customfields') }, { ...global.templatedfields, ...settings.map('templatedfields') });
  const queued = createQueuedOutput({
    destination,
    capacity: settings.number('queuesize'),
    retries: settings.number('retries'),
    sender,
    onDrop,
    metrics: ctx.metrics,
    log: ctx.log,
  });
  return {
    destination,
    push(d) {
      if (priorityNumber(d.alert.priority) < minNumber && d.alert.rule !== TEST_RULE) return true;
      return queued.push(adapt(d));
    },
    health: () => queued.health(),
    close: (drainMs) => queued.close(drainMs),
  };
}
