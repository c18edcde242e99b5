// Headless Chromium for the dashboard's end-to-end tests: Debian's `chromium` package (installed by .ci/run)
// driven by playwright-core. No browser is ever downloaded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from './server.js';

export const CHROMIUM = process.env.HANGAR_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing: string | undefined = fs.existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium; .ci/run does) to run the dashboard tests`;

/** Where screenshots go, as test artifacts (gitignored). */
export const ARTIFACTS_DIR = path.resolve('.test-artifacts/dashboard');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: false,
    // This machine's network is closed: without these, Chromium's own background connections fail at every start.
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page of a fresh browser context (its own storage) on `baseURL`. Errors the page throws and the console errors
 * it logs are collected: a test ends by checking `problems` is empty.
 */
export async function openPage(
  browser: Browser,
  baseURL: string,
  viewport = { width: 1280, height: 860 },
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ baseURL, viewport, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused request is shown in the page (tests provoke some); it is not a problem of the page's code.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
      problems.push(`console error: ${message.text()}`);
  });
  return { context, page, problems };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

/** Signs in on the sign-in page with `apiKey` and waits for the landing page (the overview). */
export async function signIn(page: Page, apiKey: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** Accepts the next confirm() the page shows. */
export function acceptNextDialog(page: Page): void {
  page.once('dialog', (dialog) => void dialog.accept());
}

const ROOT = path.resolve('.');
const WEB_SOURCES = ['web/src', 'web/public', 'web/index.html', 'web/vite.config.ts'];
const BUILT = path.join(ROOT, 'dist/web/index.html');

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...fs.readdirSync(entry).map((name) => newestMtime(path.join(entry, name))));
}

const isStale = () => {
  const built = fs.statSync(BUILT, { throwIfNoEntry: false });
  return !built || Math.max(...WEB_SOURCES.map((source) => newestMtime(path.join(ROOT, source)))) > built.mtimeMs;
};

/**
 * The server serves dist/web, which `npm ci` and `npm run build` make. When it is missing or older than the
 * sources under web/ (an edit since the last build), it is built again, once, under a lock shared by test files.
 */
export async function ensureDashboardBuilt(): Promise<void> {
  if (!isStale()) return;
  const lock = path.join(ROOT, 'dist/.web-build-lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // Another test file is building: wait for it (a lock left by a killed build is taken over).
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true });
      // The lock is another process's directory: no event tells when it goes.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    if (isStale()) {
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', 'web', '--logLevel', 'warn'],
        { cwd: ROOT, stdio: 'inherit' },
      );
    }
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export interface DashboardSession {
  hangar: TestServer;
  browser: Browser;
  /** A page of its own context on the server; signed in when asked. */
  page: Page;
  /** What the page threw or logged as an error: a test ends by checking it is empty. */
  problems: string[];
  /** Closes the browser, then stops the server. */
  close(): Promise<void>;
}

/**
 * A dashboard test file's set-up, made once per file in its `before` (a browser and a server are slow to start):
 * the dashboard built, a Hangar started with `env`, one headless Chromium and one page on it.
 */
export async function dashboardSession(
  env: Record<string, string> = {},
  options: { signIn?: boolean } = {},
): Promise<DashboardSession> {
  await ensureDashboardBuilt();
  const hangar = await startTestServer(env);
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const { page, problems } = await openPage(browser, hangar.url);
    if (options.signIn) await signIn(page, hangar.apiKey);
    const opened = browser;
    return {
      hangar,
      browser,
      page,
      problems,
      close: async () => {
        await opened.close();
        await hangar.stop();
      },
    };
  } catch (error) {
    await browser?.close();
    await hangar.stop();
    throw error;
  }
}
