import { describe, expect, it } from 'vitest';
import { runDemo } from './run-demo.js';

describe('the demo', () => {
  it('runs one program that looks both policies up in parallel, and answers from it', async () => {
    let output = '';
    const outcome = await runDemo((text) => {
      output += text;
    });
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
});
