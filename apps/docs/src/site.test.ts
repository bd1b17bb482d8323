// Walks the built documentation site (apps/docs/dist, from `pnpm run docs`) in a real Chromium: every
// guide and reference page renders without console errors, every internal link and #anchor
// resolves, search finds a guide, and the API reference is reachable from the nav and back.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const appDirectory = fileURLToPath(new URL('..', import.meta.url));
const distDirectory = join(appDirectory, 'dist');
const artifactsDirectory = join(appDirectory, 'test-artifacts');
// Debian's Chromium, installed by `npm run setup`: playwright-core drives it, nothing is downloaded.
const chromiumPath = '/usr/bin/chromium';
const isRoot = process.getuid?.() === 0;
// Where setup installs Chromium (Linux, root, apt-get), a missing browser is a failure, so CI runs
// these tests; elsewhere they skip, saying why.
const setupInstallsChromium =
  process.platform === 'linux' &&
  isRoot &&
  ['/usr/bin/apt-get', '/bin/apt-get'].some((path) => existsSync(path));
const hasChromium = existsSync(chromiumPath);

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};

/** Every file of the built site, as URL paths (`/guides/sessions.html`). */
function builtFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      files.push(`/${relative(distDirectory, join(entry.parentPath, entry.name)).split(sep).join('/')}`);
  }
  return files.sort();
}

/** The built file a same-site URL path serves, as the static server below finds it. */
function fileFor(pathname: string): string {
  const path = decodeURIComponent(pathname);
  return path.endsWith('/') ? `${path}index.html` : path;
}

/** A static file server for dist/ on a free loopback port. */
function serveDist(): Promise<Server> {
  const server = createServer((request, response) => {
    const path = fileFor(new URL(request.url ?? '/', 'http://localhost').pathname);
    const file = join(distDirectory, path);
    if (!file.startsWith(distDirectory) || !existsSync(file) || extname(file) === '') {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': contentTypes[extname(file)] ?? 'application/octet-stream' });
    response.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The element ids of a built page, from its HTML (VitePress and typedoc render them server-side). */
const idsByFile = new Map<string, Set<string>>();
function idsOf(file: string): Set<string> {
  let ids = idsByFile.get(file);
  if (ids === undefined) {
    const html = readFileSync(join(distDirectory, file), 'utf8');
    ids = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((match) => decodeHtml(match[1]!)));
    idsByFile.set(file, ids);
  }
  return ids;
}

function decodeHtml(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** The command lines of running processes, by pid; empty off Linux (read from /proc). */
function commandLines(): Map<number, string> {
  const lines = new Map<number, string>();
  if (process.platform !== 'linux') return lines;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // The process ended while we read.
    }
  }
  return lines;
}

/**
 * The profile folder of the Chromium this process launched: the browser and every helper it
 * starts carry it as `--user-data-dir`, so it tells our processes from other Chromiums on the
 * machine. (Its crash reporter is not counted: Chromium detaches it, and it ends on its own.)
 */
function ourChromiumProfile(): string | undefined {
  for (const [pid, line] of commandLines()) {
    const profile = /--user-data-dir=(\S+)/.exec(line)?.[1];
    if (profile === undefined) continue;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) return profile;
  }
  return undefined;
}

/** Waits for the processes of a Chromium profile to end; returns those still running after timeoutMs. */
async function stillRunning(profile: string, timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = [...commandLines()]
      .filter(([, line]) => line.includes(`--user-data-dir=${profile}`))
      .map(([pid]) => pid);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const canRun = hasChromium || setupInstallsChromium;
const skipReason = `skipped: ${chromiumPath} is missing and setup cannot install it here (needs Linux, root and apt-get)`;

// Skips only where no Chromium exists and setup cannot install one (not Linux, not root, no apt-get):
// the title says so. On CI (Linux, root) a missing Chromium fails the test instead.
describe.skipIf(!canRun)(canRun ? 'the documentation site' : `the documentation site (${skipReason})`, () => {
  let server: Server | undefined;
  let browser: Browser | undefined;
  let origin = '';
  let files: string[] = [];
  const consoleErrors: string[] = [];
  let chromiumProfile: string | undefined;

  beforeAll(async () => {
    if (!hasChromium) {
      throw new Error(`${chromiumPath} is missing: run 'npm run setup', which installs Debian's chromium.`);
    }
    if (
      !existsSync(join(distDirectory, 'index.html')) ||
      !existsSync(join(distDirectory, 'reference', 'index.html'))
    ) {
      throw new Error(`The built site is missing (${distDirectory}): run 'pnpm run docs' first.`);
    }
    files = builtFiles(distDirectory);
    server = await serveDist();
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      // Chromium refuses to run as root with its own sandbox.
      args: isRoot ? ['--no-sandbox'] : [],
    });
    chromiumProfile = ourChromiumProfile();
    await mkdir(artifactsDirectory, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    if (process.platform === 'linux')
      expect(chromiumProfile, "the launched Chromium's profile").toBeDefined();
    if (chromiumProfile !== undefined) {
      // Its helpers are reparented and end a moment after close() resolves.
      expect(await stillRunning(chromiumProfile, 10_000), 'Chromium processes left running').toEqual([]);
    }
  });

  async function open(path: string): Promise<Page> {
    const page = await browser!.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${path}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${path}: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) consoleErrors.push(`${path}: ${response.status()} for ${response.url()}`);
    });
    const response = await page.goto(`${origin}${path}`, { waitUntil: 'load' });
    expect(response?.status(), path).toBe(200);
    return page;
  }

  /** The broken same-site links of the open page: a missing file, or a #anchor with no element. */
  async function brokenLinks(page: Page, path: string): Promise<string[]> {
    const hrefs = await page.$$eval('a[href]', (links) =>
      links.map((link) => (link as HTMLAnchorElement).href),
    );
    const broken: string[] = [];
    for (const href of new Set(hrefs)) {
      const url = new URL(href);
      if (url.origin !== origin) continue;
      const file = fileFor(url.pathname);
      if (!files.includes(file)) {
        broken.push(`${path} links to ${url.pathname}: no such page`);
      } else if (
        url.hash !== '' &&
        file.endsWith('.html') &&
        !idsOf(file).has(decodeURIComponent(url.hash.slice(1)))
      ) {
        broken.push(`${path} links to ${url.pathname}${url.hash}: no element with that id`);
      }
    }
    return broken;
  }

  function sitePages(): string[] {
    return files.filter(
      (file) => file.endsWith('.html') && !file.startsWith('/reference/') && file !== '/404.html',
    );
  }

  function sampledReferencePages(): string[] {
    const pages = files.filter((file) => file.startsWith('/reference/') && file.endsWith('.html'));
    const others = pages.filter((file) => file !== '/reference/index.html');
    const step = Math.max(1, Math.floor(others.length / 3));
    return ['/reference/index.html', others[0]!, others[step]!, others[2 * step]!].filter(Boolean);
  }

  it('builds every guide, the reference material, the decisions and the home page', () => {
    const pages = sitePages();
    expect(pages).toContain('/index.html');
    expect(pages).toContain('/guides/getting-started.html');
    expect(pages).toContain('/errors.html');
    expect(pages.some((page) => page.startsWith('/decisions/'))).toBe(true);
  });

  /** Opens `path`, reads its heading and links, takes the screenshots, and closes it. */
  async function checkPage(path: string, headless: string[], broken: string[]): Promise<void> {
    const page = await open(path);
    const heading = (await page.locator('h1').first().textContent({ timeout: 10_000 }))?.trim() ?? '';
    if (heading === '') headless.push(path);
    broken.push(...(await brokenLinks(page, path)));
    if (path === '/index.html')
      await page.screenshot({ path: join(artifactsDirectory, 'home.png'), fullPage: true });
    if (path === '/guides/getting-started.html') {
      await page.screenshot({ path: join(artifactsDirectory, 'getting-started.png'), fullPage: true });
    }
    await page.close();
  }

  // Some 80 pages: four tabs at a time, and more time than one page's check needs on a busy machine.
  it('renders every page with a heading, no console errors and no broken links', {
    timeout: 300_000,
  }, async () => {
    const broken: string[] = [];
    const headless: string[] = [];
    const waiting = [...sitePages(), ...sampledReferencePages()];
    const tab = async (): Promise<void> => {
      for (let path = waiting.shift(); path !== undefined; path = waiting.shift()) {
        await checkPage(path, headless, broken);
      }
    };
    await Promise.all([tab(), tab(), tab(), tab()]);
    expect(headless.sort(), 'pages without a heading').toEqual([]);
    expect(broken, 'broken links').toEqual([]);
    expect(consoleErrors, 'console errors').toEqual([]);
  });

  it('finds a guide with the local search', async () => {
    const page = await open('/guides/getting-started.html');
    await page.locator('#local-search button').click();
    // Words only the multi-agent guide holds.
    await page.locator('#localsearch-input').fill('Santa Justa');
    const result = page.locator('.VPLocalSearchBox .results a').first();
    await expect.poll(() => result.getAttribute('href'), { timeout: 10_000 }).toContain('guides/multi-agent');
    await page.close();
  });

  it('reaches the API reference from the nav, and the guides back from it', async () => {
    const page = await open('/guides/getting-started.html');
    await page.locator('.VPNavBar a', { hasText: 'API reference' }).first().click();
    await page.waitForURL(`${origin}/reference/index.html`);
    expect(await page.locator('h1').first().textContent()).toContain('Ghost');
    await page.locator('a', { hasText: 'Guides' }).first().click();
    await page.waitForURL(`${origin}/guides/getting-started.html`);
    expect(await page.locator('h1').first().textContent()).toContain('Getting started');
    await page.close();
  });
});
