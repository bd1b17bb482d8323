import { describe, expect, it } from 'vitest';
import { runResearchAndWrite } from './research-and-write.js';

describe('the two-agent demo', () => {
  it('runs the researcher (a program in the sandbox) then the writer in one workflow run, usage summed', async () => {
    let output = '';
    const outcome = await runResearchAndWrite((text) => {
      output += text;
    }, {});
    expect(outcome).toBe('completed');
    expect(output).toMatch(
      /\[step\] research started\n {2}\[research\] program completed\n {2}\[step\] research done in \d+ ms\n/,
    );
    expect(output).toContain(
      '[writer] Hello! You can ask for a refund within 30 days of your order, and standard shipping takes three to five days. Best regards, Support\n',
    );
    expect(output).toContain('steps:   research (completed), writer (completed)');
    // The researcher's two turns (412 + 538) and the writer's one (96).
    expect(output).toContain('usage:   1046 in, 117 out tokens, both agents');
  });
});
