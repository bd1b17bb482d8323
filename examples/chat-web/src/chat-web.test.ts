import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseChatModel } from './chat-model.js';
import { type ChatServer, type ServerActivity, startChatServer } from './chat-server.js';

const chromiumPath = '/usr/bin/chromium';

/** What the test needs from the machine that `npm run setup` installs. */
function missingTools(): string[] {
  const missing: string[] = [];
  if (!existsSync(chromiumPath)) missing.push(`Chromium (${chromiumPath})`);
  const path = (process.env.PATH ?? '').split(delimiter);
  if (!path.some((folder) => existsSync(join(folder, 'bwrap')))) missing.push('bubblewrap (bwrap)');
  return missing;
}

const missing = missingTools();
// Where setup can install them (Linux, as root: CI), their absence is a failure, never a skip.
const canSetUp = process.platform === 'linux' && process.getuid?.() === 0;
const skipReason =
  missing.length > 0 && !canSetUp
    ? `skipped: ${missing.join(' and ')} missing; npm run setup installs them`
    : '';

/** Processes under this one whose command line contains `needle` (the sandbox, the program host). */
async function descendantsRunning(needle: string): Promise<string[]> {
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      commands.set(pid, (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' '));
    } catch {
      // The process ended while we looked.
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (parent === process.pid) return true;
    }
    return false;
  };
  return [...commands]
    .filter(([pid, command]) => isDescendant(pid) && command.includes(needle))
    .map(([, c]) => c);
}

async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs in the page: keeps every text the newest answer shows, to see it arrive in pieces. */
const recordAnswerStates = `
  window.answerStates = [];
  new MutationObserver(() => {
    const answers = document.querySelectorAll('.message.assistant');
    window.answerStates.push(answers[answers.length - 1]?.textContent ?? '');
  }).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
`;

async function ask(page: Page, text: string): Promise<void> {
  await page.fill('#question', text);
  await page.press('#question', 'Enter');
}

/**
 * Waits until the page's run has ended. The answer is on screen a moment before: the run still
 * writes its turn to the session, and leaving the page then would cancel it.
 */
async function runEnded(page: Page): Promise<void> {
  await page.waitForSelector('#stop:disabled');
}

// Skips only off Linux-as-root, where setup cannot install Chromium or bubblewrap: the title says
// why. On CI (Linux, root) a missing one fails the test, telling the user to run `npm run setup`.
describe.skipIf(skipReason !== '')(`chat-web in headless Chromium ${skipReason}`.trim(), () => {
  const activities: ServerActivity[] = [];
  let folder = '';
  let server: ChatServer | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    if (missing.length > 0) {
      throw new Error(`${missing.join(' and ')} missing: run \`npm run setup\` (CI must run it).`);
    }
    folder = await mkdtemp(join(tmpdir(), 'ghost-chat-web-test-'));
    server = await startChatServer({
      sessionsPath: join(folder, 'sessions.db'),
      client: 'vite',
      port: 0,
      model: chooseChatModel({}),
      onActivity: (activity) => activities.push(activity),
    });
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="true"]');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (folder !== '') await rm(folder, { recursive: true, force: true });
  });

  it('says which model answers', async () => {
    await expect(page.textContent('#model')).resolves.toBe('model: scripted (no API key needed)');
  });

  it('streams the answer to a question about an order, with the program and its timed tool call', async () => {
    await page.evaluate(recordAnswerStates);
    await ask(page, 'Where is order 1042?');
    const answer = 'Order 1042 (teapot, two cups, 59.9) is shipped on 2 December, arriving 5 December.';
    await page.waitForSelector(`.message.assistant:has-text("${answer}")`);
    await runEnded(page);

    await expect(page.textContent('.program code')).resolves.toContain(
      'tools.lookup_order({ order: "1042" })',
    );
    const call = page.locator('.tool-call', { hasText: 'lookup_order' });
    await expect(call.getAttribute('data-status')).resolves.toBe('done');
    await expect(call.locator('.tool-time').textContent()).resolves.toMatch(/^\d+ ms$/);
    const states = (await page.evaluate('window.answerStates')) as string[];
    const partial = states.filter(
      (state) => state.length > 0 && state.length < answer.length && answer.startsWith(state),
    );
    expect(partial.length).toBeGreaterThan(2);
  });

  it('stops a long run: the tool sees its cancellation and nothing is left running', async () => {
    const startedAt = Date.now();
    await ask(page, 'Run the sales report, please.');
    await page.waitForSelector('.tool-call[data-status="running"]:has-text("sales_report")');
    await eventually(
      () => activities.some((activity) => activity.kind === 'tool' && activity.status === 'started'),
      'sales_report to start',
    );
    expect(await descendantsRunning('bwrap')).not.toEqual([]);

    await page.click('#stop');
    await page.waitForSelector('.run-status:has-text("Stopped")');
    await expect(page.locator('.run-status.error').count()).resolves.toBe(0);
    await expect(
      page.locator('.tool-call', { hasText: 'sales_report' }).getAttribute('data-status'),
    ).resolves.toBe('cancelled');
    await eventually(
      () => activities.some((activity) => activity.kind === 'run' && activity.outcome === 'cancelled'),
      'the run to end cancelled',
    );
    expect(activities.filter((activity) => activity.kind === 'tool')).toEqual([
      { kind: 'tool', tool: 'sales_report', status: 'started' },
      { kind: 'tool', tool: 'sales_report', status: 'aborted' },
    ]);
    await eventually(async () => (await descendantsRunning('bwrap')).length === 0, 'the sandbox to go');
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    await expect(page.isEnabled('#send')).resolves.toBe(true);
  });

  it('asks before a refund and refunds once when approved', async () => {
    await ask(page, 'Please refund order 1042.');
    await page.waitForSelector('.approval button.approve');
    expect(activities.some((activity) => activity.kind === 'tool' && activity.tool === 'refund_order')).toBe(
      false,
    );
    await expect(page.textContent('.approval .question')).resolves.toContain('refund_order');

    await page.click('.approval button.approve');
    await page.waitForSelector(
      '.message.assistant:has-text("Order 1042 is refunded: 59.9 goes back to the card it was paid with.")',
    );
    await runEnded(page);
    const refunds = activities.filter(
      (activity) => activity.kind === 'tool' && activity.tool === 'refund_order',
    );
    expect(refunds).toEqual([{ kind: 'tool', tool: 'refund_order', status: 'refunded', order: '1042' }]);
    // The waiting call, then the approved call as it ran.
    const rows = page.locator('.tool-call', { hasText: 'refund_order' });
    await expect(
      rows.evaluateAll((found) => found.map((row) => row.getAttribute('data-status'))),
    ).resolves.toEqual(['approved', 'done']);
    await expect(rows.last().locator('.tool-time').textContent()).resolves.toMatch(/^\d+ ms$/);
  });

  it('refunds nothing when the person rejects, and the model reads why', async () => {
    await ask(page, 'Refund order 1043 too.');
    await page.waitForSelector('.approval:has-text("1043") button.reject');
    await page.click('.approval:has-text("1043") button.reject');
    await page.waitForSelector(
      '.message.assistant:has-text("I did not refund it: The call to refund_order was rejected by a person")',
    );
    await runEnded(page);
    const refunds = activities.filter(
      (activity) => activity.kind === 'tool' && activity.tool === 'refund_order',
    );
    expect(refunds).toHaveLength(1);
    await expect(
      page.locator('.tool-call', { hasText: 'refund_order' }).last().getAttribute('data-status'),
    ).resolves.toBe('rejected');
  });

  it('shows the conversation again after a reload', async () => {
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await expect(page.locator('.message.user').allTextContents()).resolves.toEqual([
      'Where is order 1042?',
      'Please refund order 1042.',
      'Refund order 1043 too.',
    ]);
    const answers = await page.locator('.message.assistant').allTextContents();
    expect(answers).toContain(
      'Order 1042 (teapot, two cups, 59.9) is shipped on 2 December, arriving 5 December.',
    );
    expect(answers).toContain('Order 1042 is refunded: 59.9 goes back to the card it was paid with.');
    expect(answers.at(-1)).toMatch(/^I did not refund it: The call to refund_order was rejected by a person/);
    await expect(page.textContent('.program code')).resolves.toContain('tools.lookup_order');
    await expect(page.locator('.tool-call').allTextContents()).resolves.toEqual([
      'refund_order done ',
      'refund_order error ',
    ]);
  });

  it('shows a waiting approval again after a reload, and refunds once when approved', async () => {
    await ask(page, 'Refund order 1043 after all.');
    await page.waitForSelector('.approval:has-text("1043") button.approve');
    await eventually(
      () => activities.some((activity) => activity.kind === 'run' && activity.outcome === 'suspended'),
      'the run to suspend for the approval',
    );
    await runEnded(page);

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    // The question that led to the call shows again, before the call that waits.
    await expect(page.locator('.message.user').last().textContent()).resolves.toBe(
      'Refund order 1043 after all.',
    );
    // The buttons are back, and the thread takes no new message until they are answered.
    await expect(page.locator('.approval').allTextContents()).resolves.toEqual([
      expect.stringContaining('Allow the call to refund_order? {"order":"1043"}'),
    ]);
    await expect(page.isDisabled('#send')).resolves.toBe(true);
    await expect(
      page.locator('.tool-call', { hasText: 'refund_order' }).last().getAttribute('data-status'),
    ).resolves.toBe('waiting for approval');

    await page.click('.approval:has-text("1043") button.approve');
    await page.waitForSelector(
      '.message.assistant:has-text("Order 1043 is refunded: 129 goes back to the card it was paid with.")',
    );
    await runEnded(page);
    const refunds = activities.filter(
      (activity) => activity.kind === 'tool' && activity.tool === 'refund_order',
    );
    expect(refunds).toEqual([
      { kind: 'tool', tool: 'refund_order', status: 'refunded', order: '1042' },
      { kind: 'tool', tool: 'refund_order', status: 'refunded', order: '1043' },
    ]);
    await expect(page.locator('.run-status.error').count()).resolves.toBe(0);

    // Answered: a reload shows the whole turn and no buttons, and the thread takes messages again.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await expect(page.locator('.approval').count()).resolves.toBe(0);
    await expect(page.locator('.message.user').last().textContent()).resolves.toBe(
      'Refund order 1043 after all.',
    );
    await expect(page.locator('.message.assistant').last().textContent()).resolves.toBe(
      'Order 1043 is refunded: 129 goes back to the card it was paid with.',
    );
    await ask(page, 'Where is order 1043?');
    await page.waitForSelector(
      '.message.assistant:has-text("Order 1043 (espresso grinder, 129) is being packed.")',
    );
    await runEnded(page);
  });

  it('leaves no process and no folder behind', async () => {
    await browser?.close();
    await server?.close();
    await rm(folder, { recursive: true, force: true });
    expect(await descendantsRunning('bwrap')).toEqual([]);
    expect(await descendantsRunning('chromium')).toEqual([]);
    expect(existsSync(folder)).toBe(false);
  });
});
