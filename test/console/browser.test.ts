// The web console in a real browser (issue 27, item 5): Debian's chromium driven by playwright-core
// (headless, a fresh profile in this test's TMPDIR, never a downloaded browser) against a real
// `rae run` as root (the kernel probe, the built-in syscall rules, PGlite in a fresh state
// directory). Sign-in is refused without a valid token and taken, by keyboard alone, with the token
// the first start printed; `POST /test` and a real kernel detection (`cat /etc/shadow` by a process
// this test starts, told apart from the machine's other processes by a path of this test in its
// command line) appear in the dashboard's counts; a filter narrows the events table; live mode
// shows a new alert without a reload; the Rules page counts the detection's rule; the Errors page
// lists an error posted to the API's Sentry ingestion and resolves it. Each page is also
// photographed into build/console-screenshots/ (gitignored), or $RAE_SCREENSHOTS_DIR
// (docs/console.md: how to refresh its pictures); a failing step saves
// build/console-screenshots/failed-<step>.png.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumPresent, openBrowser, shoot as shootPage, step as stepOf, WAIT_MS } from '../helpers/browser.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';
import { kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('console/browser.test.ts');
const hasChromium = chromiumPresent('console/browser.test.ts');
const run_ = gate.run && hasChromium ? test : test.skip;

const tmp = mkdtempSync(join(tmpdir(), 'rae-console-'));
/** A file only this test's `cat` names: its alert is told apart from those of other processes by it. */
const marker = join(tmp, 'console-marker');
let rae: RaeRun;
let context: BrowserContext;
let page: Page;
const urls = { console: '', forwarder: '', api: '' };
let token = '';

/** Runs `body`; on failure saves the page as build/console-screenshots/failed-<name>.png. */
const step = (name: string, body: () => Promise<void>) => stepOf(page, name, body);
/** A screenshot of the page for docs/console.md. */
const shoot = (name: string) => shootPage(page, name);

/** Runs a command and resolves with its exit code. */
function run(cmd: string, args: string[]): Promise<number | null> {
  return new Promise((done) => spawn(cmd, args, { stdio: 'ignore' }).on('exit', (code) => done(code)));
}

test.before(async () => {
  if (!gate.run || !hasChromium) return;
  writeFileSync(marker, 'x\n');
  const cfg = join(tmp, 'config.yaml');
  // a project for the Errors page (bootstrap with no user: the first start still makes its token)
  const boot = join(tmp, 'bootstrap.yaml');
  writeFileSync(boot, 'projects:\n  - path: team/shop\n');
  writeFileSync(cfg, `rules:\n  builtIn: [syscall]\nforwarder:\n  port: 0\napi:\n  port: 0\n  bootstrapFile: ${JSON.stringify(boot)}\nwebhook:\n  enabled: false\nconsole:\n  port: 0\n`);
  rae = startRae(['--config', cfg, '--state-dir', join(tmp, 'state')]);
  urls.forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
  urls.console = (await rae.waitLog(/^console: (http:\/\/127\.0\.0\.1:\d+\/)$/m, 0, WAIT_MS))[1]!;
  urls.api = (await rae.waitLog(/run: api listening on (\S+)/))[1]!;
  token = (await rae.waitLog(/console: first start: sign in with the token (\S+)/))[1]!;
  await rae.waitLog(/run: ready/);
  ({ context, page } = await openBrowser(join(tmp, 'chromium-profile')));
});

test.after(async () => {
  await context?.close();
  await rae?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

run_('sign-in: refused without a valid token, and every address shows the sign-in page until then', () =>
  step('sign-in-refused', async () => {
    const bare = await fetch(`${urls.console}console/api/whoami`);
    assert.is(bare.status, 401, 'the console API without a token');
    await page.goto(`${urls.console}#/events`);
    await page.getByLabel('Personal access token').fill('glpat-not-a-token-of-this-engine');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#signin-problem', { hasText: 'Sign-in refused (HTTP 401' }).waitFor();
    assert.ok(await page.locator('#nav').isHidden(), 'no navigation before sign-in');
    await shoot('sign-in');
  }),
);

run_('sign-in: by keyboard alone, with the token the first start printed', () =>
  step('sign-in', async () => {
    await page.goto(`${urls.console}#/dashboard`);
    await page.getByLabel('Personal access token').waitFor();
    // the field has the focus: type and press Enter, no pointer
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    assert.match((await page.locator('#who').textContent()) ?? '', 'Signed in as console');
  }),
);

run_('dashboard: POST /test and a kernel detection (cat /etc/shadow) appear in the counts', () =>
  step('dashboard', async () => {
    assert.is((await fetch(`${urls.forwarder}/test`, { method: 'POST' })).status, 200);
    assert.is(await run('cat', ['/etc/shadow', marker]), 0);
    const rules = page.locator('[data-chart="rule"]');
    await rules.locator('li[data-key="Test rule"]').waitFor();
    await rules.locator('li[data-key="Read sensitive file untrusted"]').waitFor();
    assert.ok(Number(await rules.locator('li[data-key="Test rule"] .count').textContent()) >= 1);
    assert.ok(Number(await page.locator('#total-count').getAttribute('data-total')) >= 2, 'total');
    await page.locator('[data-chart="source"] li[data-key="internal"]').waitFor();
    await page.locator('[data-chart="source"] li[data-key="syscall"]').waitFor();
    assert.ok((await page.locator('svg.timeline polyline').count()) >= 1, 'a timeline line');
    await shoot('dashboard');
  }),
);

run_('events: a filter narrows the table; the free text finds this test’s detection and its detail', () =>
  step('events-filter', async () => {
    await page.goto(`${urls.console}#/events`);
    const count = page.locator('#result-count[data-total]');
    await count.waitFor();
    const all = Number(await count.getAttribute('data-total'));
    await page.getByLabel('Rule', { exact: true }).fill('Test rule');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction((n) => Number(document.querySelector('#result-count')?.getAttribute('data-total')) < n && document.querySelectorAll('#event-rows tr[data-rule]').length > 0, all);
    const shown = await page.locator('#event-rows tr[data-rule]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-rule')));
    assert.equal([...new Set(shown)], ['Test rule']);
    await page.goto(`${urls.console}#/events?filter=${encodeURIComponent(marker)}`);
    await page.waitForFunction(() => document.querySelector('#result-count')?.getAttribute('data-total') === '1');
    await shoot('events');
    await page.locator('#event-rows tr[data-rule="Read sensitive file untrusted"] a').click();
    await page.locator('#detail-output', { hasText: marker }).waitFor();
    const raw = JSON.parse((await page.locator('#detail-raw').textContent())!) as { rule: string; output_fields: Record<string, unknown> };
    assert.is(raw.rule, 'Read sensitive file untrusted');
    assert.is(raw.output_fields['proc.cmdline'], `cat /etc/shadow ${marker}`);
    await page.getByRole('heading', { name: 'Container and pod' }).waitFor();
    await shoot('event-detail');
  }),
);

run_('events: live mode shows a new alert without a reload', () =>
  step('events-live', async () => {
    await page.goto(`${urls.console}#/events?rule=${encodeURIComponent('Test rule')}`);
    await page.locator('#result-count[data-total]').waitFor();
    const before = Number(await page.locator('#event-rows tr[data-id]').first().getAttribute('data-id'));
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.getByLabel('Live: show new alerts as they come').focus();
    await page.keyboard.press('Space');
    await page.locator('#live-state', { hasText: 'waiting for new alerts' }).waitFor();
    assert.is((await fetch(`${urls.forwarder}/test`, { method: 'POST' })).status, 200);
    const fresh = page.locator('#event-rows tr.fresh[data-rule="Test rule"]').first();
    await fresh.waitFor();
    assert.ok(Number(await fresh.getAttribute('data-id')) > before, 'a newer alert on top');
    assert.ok(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument === true), 'the page was not reloaded');
  }),
);

run_('rules: the loaded rules with their match counts', () =>
  step('rules', async () => {
    await page.goto(`${urls.console}#/rules`);
    await page.getByLabel('Find a rule (name, source or tag)').fill('Read sensitive file untrusted');
    const row = page.locator('#rule-rows tr[data-rule="Read sensitive file untrusted"]');
    await row.waitFor();
    // source, priority, tags, enabled, matches, evaluations
    const cells = await row.locator('td').allTextContents();
    assert.equal([cells[0], cells[1], cells[3]], ['syscall', 'Warning', 'yes']);
    assert.ok(Number(cells[4]!.replaceAll(',', '')) >= 1, `its matches: ${cells[4]}`);
    await page.getByLabel('Find a rule (name, source or tag)').fill('');
    await shoot('rules');
  }),
);

run_('errors: an error posted to the API is listed, its stack trace shown, and Resolve moves it to the resolved list', () =>
  step('errors', async () => {
    const auth = { 'private-token': token };
    const json = { ...auth, 'content-type': 'application/json' };
    const project = ((await (await fetch(`${urls.console}console/api/projects`, { headers: auth })).json()) as { projects: Array<{ id: number; path: string }> }).projects.find((p) => p.path === 'team/shop')!;
    const base = `${urls.api}/api/v4/projects/${project.id}/error_tracking`;
    assert.is((await fetch(`${base}/settings`, { method: 'PUT', headers: json, body: JSON.stringify({ active: true, integrated: true }) })).status, 200);
    let keys = (await (await fetch(`${base}/client_keys`, { headers: auth })).json()) as Array<{ public_key: string }>;
    if (keys.length === 0) keys = [(await (await fetch(`${base}/client_keys`, { method: 'POST', headers: auth })).json()) as { public_key: string }];
    const frames = [
      { function: 'main', module: 'app', lineno: 3, in_app: true },
      { function: 'checkout', module: 'cart', lineno: 42, in_app: true, pre_context: ['function checkout(cart) {'], context_line: "  if (cart.empty) throw new TypeError('cart is empty');", post_context: ['}'] },
    ];
    const event = { event_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', timestamp: Date.now() / 1000, platform: 'node', level: 'error', exception: { values: [{ type: 'TypeError', value: 'cart is empty', stacktrace: { frames } }] } };
    const posted = await fetch(`${urls.api}/errortracking/api/v1/projects/api/${project.id}/store/?sentry_key=${keys[0]!.public_key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    assert.is(posted.status, 200, await posted.text());
    await page.goto(`${urls.console}#/errors?project=${project.id}`);
    await page.locator('#error-rows a', { hasText: 'TypeError: cart is empty' }).click();
    await page.locator('.frames li').first().waitFor();
    // the crash frame first
    assert.match((await page.locator('.frames li').first().textContent()) ?? '', 'checkout at cart:42');
    await shoot('error-detail');
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.locator('dd[data-fact="status"]', { hasText: /^resolved$/ }).waitFor();
    await page.goto(`${urls.console}#/errors?project=${project.id}&status=resolved`);
    await page.locator('#error-rows a', { hasText: 'TypeError: cart is empty' }).waitFor();
    await page.goto(`${urls.console}#/errors?project=${project.id}`);
    await page.locator('#error-none').waitFor();
  }),
);

run_('phone width: the dashboard and the events fit the screen (tables scroll in their frame)', () =>
  step('phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [name, hash, ready] of [
        ['phone-dashboard', '#/dashboard', '[data-chart="rule"] li'],
        ['phone-events', '#/events', '#result-count[data-total]'],
      ] as const) {
        await page.goto(`${urls.console}${hash}`);
        await page.locator(ready).first().waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${hash}: the page is ${overflow} px wider than the screen`);
        await shoot(name);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }),
);

test.run();
