// The fleet's console in a real browser (issue 27, acceptance: "`rae forwarder` with two engines
// posting to it: the console shows both hostnames"): the fleet of test/helpers/fleet.ts (a real
// `rae forwarder` on PGlite, two real `rae run` engines, node-a and node-b, posting to it) and
// Debian's chromium (test/helpers/browser.ts) signed in to the forwarder's console with a
// read_api token. The dashboard's hostname chart counts each engine's alerts, the Events table
// shows both hostnames, and the hostname link narrows it to one. No root and no kernel probe:
// the engines run without syscalls. Photographs fleet-dashboard.png for docs/console.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pgliteStorage } from '../../support/api/storage.js';
import { chromiumPresent, openBrowser, shoot, step } from '../helpers/browser.js';
import { postTest, startFleet, TOKEN, type Fleet } from '../helpers/fleet.js';
import { until } from '../helpers/until.js';

const run_ = chromiumPresent('console/fleet-browser.test.ts') ? test : test.skip;
const storage = pgliteStorage();
const tmp = mkdtempSync(join(tmpdir(), 'rae-fleet-console-'));
let fleet: Fleet | undefined;
let context: BrowserContext | undefined;
let page: Page | undefined;

test.after(async () => {
  await context?.close();
  await fleet?.close();
  await storage.shutdown();
  rmSync(tmp, { recursive: true, force: true });
});

run_('rae forwarder with two engines posting: its console shows both hostnames, each with its count', async () => {
  fleet = await startFleet(tmp, await storage.fresh());
  const [a, b] = fleet.engines;
  await postTest(a!.url, 1);
  await postTest(b!.url, 2);
  await until(
    () => fleet!.get('/api/v1/events/count'),
    (r) => r.statistics.all === 3,
    'the 3 alerts of both engines stored',
  );
  ({ context, page } = await openBrowser(join(tmp, 'chromium-profile')));
  const p = page;
  await step(p, 'fleet-dashboard', async () => {
    await p.goto(`${fleet!.consoleUrl}#/dashboard`);
    await p.getByLabel('Personal access token').fill(TOKEN);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const hosts = p.locator('[data-chart="hostname"]');
    await hosts.locator('li[data-key="node-b"]').waitFor();
    const counts = await hosts.locator('li').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-key'), r.querySelector('.count')?.textContent]));
    assert.equal(counts, [
      ['node-b', '2'],
      ['node-a', '1'],
    ]);
    await shoot(p, 'fleet-dashboard');
  });
  await step(p, 'fleet-events', async () => {
    await p.goto(`${fleet!.consoleUrl}#/events`);
    await p.waitForFunction(() => document.querySelector('#result-count')?.getAttribute('data-total') === '3');
    const hostnames = await p.locator('#event-rows tr[data-id] td:nth-child(4)').allTextContents();
    assert.equal([...hostnames].sort(), ['node-a', 'node-b', 'node-b']);
    await p.goto(`${fleet!.consoleUrl}#/events?hostname=node-a`);
    await p.waitForFunction(() => document.querySelector('#result-count')?.getAttribute('data-total') === '1');
    assert.equal(await p.locator('#event-rows tr[data-id] td:nth-child(4)').allTextContents(), ['node-a']);
  });
});

test.run();
