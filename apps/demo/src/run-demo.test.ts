import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDemo } from './run-demo.js';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

/** An environment with no API key whose conversation file is fresh. */
async function freshEnvironment(): Promise<NodeJS.ProcessEnv> {
  const folder = await mkdtemp(join(tmpdir(), 'ghost-demo-test-'));
  folders.push(folder);
  return { GHOST_DEMO_CONVERSATION: join(folder, 'conversation.db') };
}

describe('the demo', () => {
  it('runs one program that looks both policies up in parallel, and answers from it', async () => {
    let output = '';
    const environment = await freshEnvironment();
    const outcome = await runDemo((text) => {
      output += text;
    }, environment);
    expect(outcome).toBe('completed');
    expect(output).toContain('The model is scripted');
    expect(output).toContain("[program] quickjs in sandbox 'bwrap':");
    expect(output).toContain("    tools.help_center_lookup({ query: 'refund policy' }),");
    expect(output).toMatch(
      /\[tool\] help_center_lookup \(from the program\) ok in \d+ ms: Refunds are available within 30 days\./,
    );
    expect(output).toMatch(
      /\[tool\] help_center_lookup \(from the program\) ok in \d+ ms: Standard shipping takes three to five days\./,
    );
    expect(output).toContain(
      '[program] completed; output:\n    Refunds are available within 30 days.\n    Standard shipping takes three to five days.\n',
    );
    expect(output).toContain('outcome: completed');
    expect(output).toContain("sandbox: 'bwrap'");
    expect(output).toMatch(/enforced: seccomp, x86_64|enforced: seccomp, aarch64/);
    expect(output).not.toMatch(/\[tool\] exec/);
  });

  it('keeps the conversation in a SQLite file across runs: the second run asks a follow-up the model answers from it', async () => {
    const environment = await freshEnvironment();
    let first = '';
    expect(await runDemo((text) => (first += text), environment)).toBe('completed');
    expect(first).toContain(`The conversation is kept in ${environment.GHOST_DEMO_CONVERSATION}`);
    expect(first).toMatch(/session: 'demo' of .+, 4 messages in /);

    let second = '';
    expect(await runDemo((text) => (second += text), environment)).toBe('completed');
    expect(second).toContain(
      `The conversation continues from ${environment.GHOST_DEMO_CONVERSATION} (4 messages so far)`,
    );
    expect(second).toContain('> Could I still get a refund for an order I placed 40 days ago?');
    expect(second).toContain('refunds are available within 30 days, and 40 days is past that.');
    expect(second).not.toContain('[program]');
    expect(second).toMatch(/session: 'demo' of .+, 6 messages in /);
  });
});
