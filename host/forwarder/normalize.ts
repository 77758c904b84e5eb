// What falcosidekick 2.30 does to a payload between validation and its outputs
// (reference/module-and-forwarder.md §4), and the event POST /test creates. Consumes a parsed
// Alert; produces the Alert the outputs and the events counter see.
import { TEST_RULE, type Alert } from '../output/alert.js';
import { nowNs } from '../output/time.js';

const LONG_PAYLOAD_CHARS = 4096;
const LONG_FIELD_CHARS = 512;
const CUT_FIELD_CHARS = 507;

/**
 * falcosidekick's normalisation of a POST / payload: rule "Test rule" gets source `internal`,
 * an empty source becomes `syscalls` (sic), and when the body is over 4096 characters every
 * string output field over 512 characters is cut to 507 + "[...]", in the fields and in the
 * message alike.
 */
export function normalizePayload(a: Alert, bodyChars: number): Alert {
  const source = a.rule === TEST_RULE ? 'internal' : a.source === '' ? 'syscalls' : a.source;
  if (bodyChars <= LONG_PAYLOAD_CHARS) return { ...a, source };
  let message = a.message;
  const outputFields = { ...a.outputFields };
  for (const [k, v] of Object.entries(outputFields)) {
    if (typeof v !== 'string' || v.length <= LONG_FIELD_CHARS) continue;
    const cut = `${v.slice(0, CUT_FIELD_CHARS)}[...]`;
    Object.defineProperty(outputFields, k, { value: cut, enumerable: true, writable: true, configurable: true });
    message = message.split(v).join(cut);
  }
  return { ...a, source, message, outputFields };
}

/** The event POST /test creates (falcosidekick's test payload, under our names). */
export function testAlert(hostname: string): Alert {
  return {
    timeNs: nowNs(),
    rule: TEST_RULE,
    priority: 'Debug',
    source: 'internal',
    tags: ['example', 'test'],
    hostname,
    message: 'This is a test from the runtime-audit-engine event forwarder',
    outputFields: { 'proc.name': 'enginesidekick', 'user.name': 'enginesidekick' },
  };
}
