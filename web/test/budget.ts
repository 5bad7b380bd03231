/**
 * `npm run budget:web`: the Terminal's budgets, measured in headless Chromium against the real service
 * on a fresh SQLite file, and printed (a measurement, not a test: figures vary with the machine).
 *   - initial JavaScript of the sign-in page and of the explorer, gzipped (target <= 100 KB)
 *   - navigation to a rendered explorer (target < 1 s), the median of five loads
 *   - a 10,000-point chart drawn with the Terminal's own chart module (target < 200 ms), median of five
 */
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { startServer } from '../../test/helpers/server.ts';
import { buildTerminal, launch } from './browser.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Loads `url` in a fresh page with the cache off and sums the JavaScript it fetched, raw and gzipped. */
async function initialJs(page: Page, url: string, ready: (page: Page) => Promise<void>) {
  const sizes: { raw: number; gzip: number }[] = [];
  const pending: Promise<void>[] = [];
  const onResponse = (response: import('playwright-core').Response) => {
    if (response.request().resourceType() !== 'script') return;
    pending.push(
      response.body().then((body) => {
        sizes.push({ raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
      }),
    );
  };
  page.on('response', onResponse);
  await page.goto(url);
  await ready(page);
  await Promise.all(pending);
  page.off('response', onResponse);
  return {
    files: sizes.length,
    raw: sizes.reduce((s, x) => s + x.raw, 0),
    gzip: sizes.reduce((s, x) => s + x.gzip, 0),
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

buildTerminal();
const server = await startServer({ listen: true });
const browser = await launch();
try {
  const { page } = browser;
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });

  const signIn = await initialJs(page, `${server.url}/terminal/sign-in`, (p) =>
    p.getByRole('heading', { name: 'Sign in' }).waitFor(),
  );
  await page.getByRole('button', { name: 'Register for the public test' }).click();
  await page.getByLabel('Email').fill('budget@example.com');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Register and sign in' }).click();
  await page.getByRole('heading', { name: 'Welcome' }).waitFor();

  const rendered = (p: Page) => p.getByText(/^\d+ of \d+ datasets$/).waitFor();
  const explorer = await initialJs(page, `${server.url}/terminal/explorer`, rendered);

  const navigations: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto('about:blank');
    await page.goto(`${server.url}/terminal/explorer`);
    await rendered(page);
    // Milliseconds since the navigation started, when the catalog table has rendered.
    navigations.push(await page.evaluate(() => performance.now()));
  }

  // The chart module is the one the dataset page loads; it is timed on 10,000 points of its own.
  await page.goto(`${server.url}/terminal/dataset/analytics/features`);
  await page.getByTestId('estimate-cost').waitFor();
  await page.getByRole('button', { name: /^Read/ }).click();
  await page.locator('[data-drawn=true] canvas').waitFor();
  const chartModule = await page.evaluate(
    () =>
      performance
        .getEntriesByType('resource')
        .map((e) => e.name)
        .find((name) => /\/assets\/line-chart-[^/]+\.js$/.test(name)) ?? '',
  );
  const chartTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    chartTimes.push(
      await page.evaluate(async (url) => {
        const { drawChart } = (await import(url)) as {
          drawChart: (
            el: HTMLElement,
            xs: number[],
            series: { label: string; values: number[] }[],
          ) => {
            destroy(): void;
          };
        };
        const el = document.createElement('div');
        el.style.width = '1200px';
        document.body.append(el);
        const start = Date.UTC(2000, 0, 1) / 1000;
        const xs = Array.from({ length: 10_000 }, (_, i) => start + i * 86_400);
        let level = 100;
        const values = xs.map(() => {
          level += Math.sin(level) * 2;
          return level;
        });
        const t0 = performance.now();
        const chart = drawChart(el, xs, [{ label: 'walk', values }]);
        // Until the frame that shows it has been painted.
        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        const ms = performance.now() - t0;
        chart.destroy();
        el.remove();
        return ms;
      }, chartModule),
    );
  }

  const lines = [
    [
      'Initial JS, sign-in page (gzipped)',
      `${kb(signIn.gzip)} (${signIn.files} files, ${kb(signIn.raw)} raw)`,
      '<= 100 KB',
      signIn.gzip <= 100 * 1024,
    ],
    [
      'Initial JS, explorer (gzipped)',
      `${kb(explorer.gzip)} (${explorer.files} files, ${kb(explorer.raw)} raw)`,
      '<= 100 KB',
      explorer.gzip <= 100 * 1024,
    ],
    [
      'Navigation to a rendered explorer (median of 5)',
      `${median(navigations).toFixed(0)} ms`,
      '< 1000 ms',
      median(navigations) < 1000,
    ],
    [
      '10,000-point chart drawn (median of 5)',
      `${median(chartTimes).toFixed(1)} ms`,
      '< 200 ms',
      median(chartTimes) < 200,
    ],
  ] as const;
  for (const [what, figure, target, ok] of lines) {
    console.log(`${ok ? 'ok  ' : 'OVER'} ${what}: ${figure} (target ${target})`);
  }
  process.exitCode = lines.every((l) => l[3]) ? 0 : 1;
} finally {
  await browser.close();
  await server.close();
}
