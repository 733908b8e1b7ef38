// Real headless Chromium for tests of the status page: Debian's `chromium`, driven by playwright-core.
import { existsSync } from 'node:fs';
import type { Context } from 'mocha';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export interface OpenedPage {
  page: Page;
  /** Uncaught script errors and console errors (Content-Security-Policy violations among them). */
  problems: string[];
}

/**
 * Registers hooks that launch one browser for the suite and close it (and every page a test opened)
 * whatever happens. Without Chromium the suite fails, or is skipped when KNH_SKIP_BROWSER=1.
 */
export function useChromium(): (viewport?: {
  width: number;
  height: number;
  /** false: a reader with scripts off (what the server renders is all there is). */
  javaScriptEnabled?: boolean;
}) => Promise<OpenedPage> {
  let browser: Browser | null = null;
  let opened: Page[] = [];

  before(async function (this: Context) {
    if (!existsSync(CHROMIUM_PATH)) {
      const why = `${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install chromium); CI installs it`;
      if (process.env.KNH_SKIP_BROWSER === '1') {
        console.log(`    skipped (KNH_SKIP_BROWSER=1): ${why}`);
        this.skip();
      }
      throw new Error(`${why}. Set KNH_SKIP_BROWSER=1 to skip the browser tests instead.`);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });

  afterEach(async () => {
    const pages = opened;
    opened = [];
    await Promise.all(
      pages.map((p) =>
        p
          .context()
          .close()
          .catch(() => undefined),
      ),
    );
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    browser = null;
  });

  return async ({ width, height, javaScriptEnabled = true } = { width: 1280, height: 900 }) => {
    if (!browser) throw new Error('Chromium is not running (the before hook failed)');
    const context = await browser.newContext({ viewport: { width, height }, javaScriptEnabled });
    const page = await context.newPage();
    opened.push(page);
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    return { page, problems };
  };
}
