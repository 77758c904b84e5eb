// ModuleSources: a source that fails to start is retried with doubling delays until it starts,
// each state is reported (starting, failed with the error and attempt, up), and disabling the
// module ends the retries. Delays are a few ms; the test waits for states, never for time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ModuleSources, type SourceState } from '../../host/resources/index.js';

/** A source that fails its first `failures` starts. */
function flaky(failures: number) {
  let starts = 0;
  let stops = 0;
  return {
    source: {
      name: 'webhook',
      async start() {
        if (++starts <= failures) throw new Error(`listen EADDRINUSE (start ${starts})`);
        return { stop: async () => void stops++ };
      },
    },
    starts: () => starts,
    stops: () => stops,
  };
}

/** States reported, and a wait for one that satisfies `pred`. */
function recorder() {
  const states: SourceState[] = [];
  const waitFor = async (pred: (s: SourceState) => boolean, what: string) => {
    const deadline = Date.now() + 300_000;
    while (!states.some(pred)) {
      if (Date.now() > deadline) throw new Error(`no state ${what}: ${JSON.stringify(states)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return { states, waitFor };
}

test('sources: a failing source is retried with doubling delays until it starts', async () => {
  const f = flaky(3);
  const r = recorder();
  const logs: string[] = [];
  const sources = new ModuleSources((m) => logs.push(m), { onState: (_n, s) => r.states.push(s), retryMs: 4, retryMaxMs: 10 });
  await sources.add(f.source);
  await sources.setEnabled(true);
  await r.waitFor((s) => s.state === 'up', 'up');
  assert.equal(r.states, [
    { state: 'off', reason: 'the module is disabled' },
    { state: 'starting' },
    { state: 'failed', error: 'listen EADDRINUSE (start 1)', attempts: 1, retryInMs: 4 },
    { state: 'starting' },
    { state: 'failed', error: 'listen EADDRINUSE (start 2)', attempts: 2, retryInMs: 8 },
    { state: 'starting' },
    { state: 'failed', error: 'listen EADDRINUSE (start 3)', attempts: 3, retryInMs: 10 },
    { state: 'starting' },
    { state: 'up' },
  ]);
  assert.equal(sources.names, ['webhook']);
  assert.ok(logs.includes('module: source webhook did not start: listen EADDRINUSE (start 1); retrying in 0.004 s (attempt 1); the engine runs on without it'), logs.join('\n'));
  assert.ok(logs.includes('module: source webhook started (after 3 failed attempts)'), logs.join('\n'));
  await sources.stopAll();
  assert.is(f.stops(), 1);
  assert.equal(r.states.at(-1), { state: 'off', reason: 'stopped' });
});

test('sources: disabling the module ends the retries of a failed source', async () => {
  const f = flaky(Infinity);
  const r = recorder();
  const sources = new ModuleSources(() => {}, { onState: (_n, s) => r.states.push(s), retryMs: 2, retryMaxMs: 2 });
  await sources.add(f.source);
  await sources.setEnabled(true);
  await r.waitFor((s) => s.state === 'failed' && s.attempts >= 3, 'a third failure');
  await sources.setEnabled(false);
  assert.equal(r.states.at(-1), { state: 'off', reason: 'the module is disabled' });
  const starts = f.starts();
  // A retry already due would have started by the next few turns of the event loop.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.is(f.starts(), starts);
  assert.equal(sources.names, []);
});

test.run();
