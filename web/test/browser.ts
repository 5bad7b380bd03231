/**
 * Browser tests' tools: Debian's Chromium driven by playwright-core (no browser is downloaded), the
 * Terminal built fresh, axe-core injected into pages, screenshots kept under web/test/screenshots/.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { startServer, type TestServer } from '../../test/helpers/server.ts';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = new URL('../../', import.meta.url).pathname;
export const SCREENSHOTS = join(ROOT, 'web/test/screenshots');

/**
 * Whether the browser tests can run here. In CI (CI=true) a missing Chromium is a failure, not a skip:
 * `.ci/run` installs it.
 */
export function browserSkipReason(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install it (apt-get install chromium), as .ci/run does.`,
    );
  }
  return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
}

/** Builds the Terminal as `npm install` does, so the tests see the sources as they are now. */
export function buildTerminal(): void {
  execFileSync(
    join(ROOT, 'node_modules/.bin/vite'),
    ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launch(): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'tmd-chromium-'));
  // A fresh profile per run: launchPersistentContext is how Playwright takes a user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    acceptDownloads: true,
    viewport: { width: 1360, height: 900 },
    // West of UTC, where a date drawn as local midnight of its UTC day would show the day before.
    timezoneId: 'America/New_York',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page and fails on any serious or critical violation. It is injected through the
 * DevTools protocol (an isolated script), so the page's CSP stays as strict as it is.
 */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  const violations = (await page.evaluate(`(async () => {
    if (!window.axe) { ${axeSource} }
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map(
      (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
    [],
    `${name}: axe-core found serious or critical violations`,
  );
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Exact token strings to micro-tokens, as the ledger counts them. */
export function micros(tokens: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(tokens.trim());
  assert.ok(match, `not a token amount: ${tokens}`);
  const value = BigInt(match[2] as string) * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'));
  return match[1] ? -value : value;
}

/** Signs in through the sign-in page and waits for the page `next` (a Terminal path such as "/keys"). */
export async function signIn(
  page: Page,
  url: string,
  email: string,
  password: string,
  next: string,
): Promise<void> {
  await page.goto(`${url}/terminal/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(new RegExp(`/terminal${next}$`));
}

/** The header bar's balance, as the user reads it. */
export async function headerBalance(page: Page): Promise<string> {
  return (await page.getByTestId('header-balance').textContent())?.trim() ?? '';
}

/** Waits until the header bar's balance is no longer `old` (a read was charged), and returns it. */
export async function balanceAfter(page: Page, old: string): Promise<string> {
  await page.waitForFunction(
    (o) => document.querySelector('[data-testid="header-balance"]')?.textContent?.trim() !== o,
    old,
  );
  return headerBalance(page);
}

/** The Terminal built fresh, served by a real service listening on a port, and a browser on it. */
export interface Terminal {
  server: TestServer;
  browser: BrowserSession;
  page: Page;
}

/** Opens the Terminal for a suite of parts' tests: any uncaught page error fails the suite. */
export async function openTerminal(options: Parameters<typeof startServer>[0] = {}): Promise<Terminal> {
  buildTerminal();
  const server = await startServer({ ...options, listen: true });
  const browser = await launch();
  browser.page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
  return { server, browser, page: browser.page };
}

export async function closeTerminal(terminal: Partial<Terminal>): Promise<void> {
  await terminal.browser?.close();
  await terminal.server?.close();
}
