import { describe, expect, it } from 'vitest';
import { runDemo } from './run-demo.js';

describe('the demo', () => {
  it('streams the answer, shows both tool calls and a summary, and completes', async () => {
    let output = '';
    const outcome = await runDemo((text) => {
      output += text;
    });
    expect(outcome).toBe('completed');
    expect(output).toContain('The model is scripted');
    expect(output).toMatch(/\[tool\] help_center_lookup ok in \d+ ms: .*refunds/);
    expect(output).toMatch(/\[tool\] help_center_lookup ok in \d+ ms: .*shipping/);
    expect(output).toContain('Orders ship within 2 business days');
    expect(output).toContain('outcome: completed');
    expect(output).toContain('usage:   487 in, 79 out tokens');
  });
});
