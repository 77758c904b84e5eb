// Sentry envelope parsing and event grouping, without a server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventToError, occurredAt } from '../../host/api/collector/event.js';
import { keyFromDsn, parseEnvelope } from '../../host/api/collector/envelope.js';

test('envelope items: with length (payload may hold newlines), without length, trailing newlines', () => {
  const payload = '{"a":"line1\\nline2"}\n{"still":"payload"}';
  const body = Buffer.from(`{"event_id":"e"}\n{"type":"attachment","length":${Buffer.byteLength(payload)}}\n${payload}\n{"type":"event"}\n{"x":1}\n\n`);
  const env = parseEnvelope(body)!;
  assert.equal(env.header, { event_id: 'e' });
  assert.equal(
    env.items.map((i) => [i.header.type, i.payload.toString()]),
    [
      ['attachment', payload],
      ['event', '{"x":1}'],
    ],
  );
  assert.equal(parseEnvelope(Buffer.from('{"event_id":"e"}'))!.items, [], 'header only');
  assert.equal(
    parseEnvelope(Buffer.from('{}\n{"type":"event"}'))!.items.map((i) => i.payload.length),
    [0],
    'item at the end without payload',
  );
});

test('envelope failures: not JSON, non-object header, overrunning length', () => {
  for (const text of ['', 'nope', '[1]\n', '{}\nnot-json\n{}', '{}\n{"type":"event","length":10}\n{}']) {
    assert.is(parseEnvelope(Buffer.from(text)), null, JSON.stringify(text));
  }
});

test('the key of a DSN', () => {
  assert.is(keyFromDsn('https://glet_abc@host:443/errortracking/api/v1/projects/1'), 'glet_abc');
  assert.is(keyFromDsn('https://host/x'), undefined);
  assert.is(keyFromDsn(42), undefined);
});

test('grouping: the first exception with a stacktrace; actor from transaction, else the last frame', () => {
  const event = {
    platform: 'python',
    exception: [
      { type: 'KeyError', value: 'no stack' },
      {
        type: 'ValueError',
        value: 'bad',
        stacktrace: {
          frames: [
            { function: 'outer', module: 'a' },
            { function: 'inner', module: null },
          ],
        },
      },
    ],
  };
  const e = eventToError(event, 5) as { name: string; description: string; actor: string; platform: string };
  assert.equal([e.name, e.description, e.actor, e.platform], ['ValueError', 'bad', 'inner()', 'python']);
  const t = eventToError({ ...event, transaction: 'POST /pay' }, 5) as { actor: string };
  assert.is(t.actor, 'POST /pay');
  const long = eventToError({ exception: { values: [{ type: 'E', value: 'v'.repeat(2000) }] } }, 5) as { description: string; actor: string };
  assert.is(long.description.length, 1024);
  assert.is(long.actor, 'unknown');
});

test('timestamps: seconds, numeric text, ISO text, else now', () => {
  const now = new Date('2020-01-01T00:00:00Z');
  assert.is(occurredAt(1_700_000_000, now).toISOString(), '2023-11-14T22:13:20.000Z');
  assert.is(occurredAt('1700000000.25', now).toISOString(), '2023-11-14T22:13:20.250Z');
  assert.is(occurredAt('2024-02-03T04:05:06Z', now).toISOString(), '2024-02-03T04:05:06.000Z');
  assert.is(occurredAt('yesterday', now), now);
  assert.is(occurredAt(undefined, now), now);
});

test.run();
