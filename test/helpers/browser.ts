// The console's browser tests' shared parts (issue 27, item 5): Debian's chromium driven by
// playwright-core, headless with a fresh profile and the flags the issue names (never a
// downloaded browser), the page screenshots docs/console.md shows, and a step that photographs
// the page when it fails. Consumes a profile directory; produces a browser context and its page.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
/** Wide margins: rules compile and the dashboard refreshes every 5 s on a busy 2-core machine. */
export const WAIT_MS = 300_000;
/** Where the pages' screenshots go: $RAE_SCREENSHOTS_DIR (docs/console to refresh the docs' pictures), else build/console-screenshots/. */
const SHOTS = resolve(process.env.RAE_SCREENSHOTS_DIR || 'build/console-screenshots');
/** Where a failed step's screenshot goes: never among the docs' pictures. */
const FAILED_SHOTS = resolve('build/console-screenshots');

/** True when chromium is installed; else says on stderr that `file` skips its tests (a skip fails a CI=true run). */
export function chromiumPresent(file: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  process.stderr.write(`\n!!! ${file}: SKIPPING: no ${CHROMIUM} (scripts/setup.sh --for test installs Debian's chromium)\n\n`);
  return false;
}

/** Chromium with a fresh profile in `profileDir` (inside the test's temporary directory), a laptop's viewport, and its first page with WAIT_MS as every wait's bound. */
export async function openBrowser(profileDir: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(WAIT_MS);
  return { context, page };
}

/** Runs `body`; on failure saves `page` as build/console-screenshots/failed-<name>.png and says where. */
export async function step(page: Page | undefined, name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    mkdirSync(FAILED_SHOTS, { recursive: true });
    const file = join(FAILED_SHOTS, `failed-${name}.png`);
    await page?.screenshot({ path: file, fullPage: true }).catch(() => {});
    throw new Error(`${(err as Error).message}\n(screenshot of the page: ${file})`);
  }
}

/** A screenshot for docs/console.md, as <SHOTS>/<name>.png. */
export async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
