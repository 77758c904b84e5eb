// Replay inputs: field events (JSON lines of {"source","time","fields"}) and orchestrator audit
// events (JSON lines as the API server's log backend writes them, or one EventList / Event
// document). Each input record becomes a SourceEvent or a located rejection; nothing is
// dropped silently.
import { cutDeepValues, DEFAULT_MAX_EVENT_DEPTH } from './audit/depth.js';
import { auditDocumentEvents, auditSourceEvent } from './audit/document.js';
import { parseRfc3339 } from '../output/time.js';
import { FieldEvent, type SourceEvent } from '../engine/index.js';

export type ReplayFormat = 'fields' | 'audit';

/** One input record that could not become an event, with its 1-based line. */
interface Rejection {
  line: number;
  reason: string;
}

export interface ReplayInput {
  events: SourceEvent[];
  rejected: Rejection[];
}

function nonEmptyLines(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((t, i) => ({ line: i + 1, text: t.trim() }))
    .filter((l) => l.text.length > 0);
}

/** Parses a replay input text. */
export function readReplayInput(text: string, format: ReplayFormat): ReplayInput {
  const events: SourceEvent[] = [];
  const rejected: Rejection[] = [];
  let num = 0n;
  if (format === 'audit') {
    let docs: Array<{ line: number; value: unknown }>;
    // One JSON document (an EventList or Event, possibly pretty-printed), else JSON lines.
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch {
      whole = undefined;
    }
    if (whole !== undefined) docs = [{ line: 1, value: whole }];
    else {
      docs = [];
      for (const l of nonEmptyLines(text)) {
        try {
          docs.push({ line: l.line, value: JSON.parse(l.text) });
        } catch (err) {
          rejected.push({ line: l.line, reason: `invalid JSON: ${(err as Error).message}` });
        }
      }
    }
    for (const d of docs) {
      const { events: evs, reason } = auditDocumentEvents(d.value);
      if (reason) rejected.push({ line: d.line, reason });
      for (const json of evs) {
        // The webhook's default bound, so that a replayed event reads as the live one did.
        cutDeepValues(json, DEFAULT_MAX_EVENT_DEPTH);
        events.push(auditSourceEvent(json, ++num));
      }
    }
    return { events, rejected };
  }
  for (const l of nonEmptyLines(text)) {
    let obj: unknown;
    try {
      obj = JSON.parse(l.text);
    } catch (err) {
      rejected.push({ line: l.line, reason: `invalid JSON: ${(err as Error).message}` });
      continue;
    }
    const o = obj as { source?: unknown; time?: unknown; fields?: unknown };
    if (typeof obj !== 'object' || obj === null || typeof o.fields !== 'object' || o.fields === null || Array.isArray(o.fields)) {
      rejected.push({ line: l.line, reason: "a field event needs a 'fields' object" });
      continue;
    }
    const source = o.source ?? 'syscall';
    if (source !== 'syscall' && source !== 'k8s_audit') {
      rejected.push({ line: l.line, reason: `unknown source '${String(source)}' (expected syscall or k8s_audit)` });
      continue;
    }
    let timeNs = 0n;
    if (o.time !== undefined) {
      const t = typeof o.time === 'string' ? parseRfc3339(o.time) : undefined;
      if (t === undefined) {
        rejected.push({ line: l.line, reason: `invalid 'time' (expected RFC 3339): ${JSON.stringify(o.time)}` });
        continue;
      }
      timeNs = t;
    }
    const fields = o.fields as Record<string, unknown>;
    const evtType = typeof fields['evt.type'] === 'string' ? fields['evt.type'] : undefined;
    if (source === 'syscall' && evtType === undefined) {
      rejected.push({ line: l.line, reason: "a syscall field event needs 'evt.type'" });
      continue;
    }
    events.push({ source, timeNs, evtType, fields: new FieldEvent(fields, { source, timeNs, num: ++num }) });
  }
  return { events, rejected };
}
