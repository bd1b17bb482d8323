import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runApprovalDemo } from './approval-demo.js';

const demoFolders = async () =>
  (await readdir(tmpdir())).filter((name) => name.startsWith('ghost-demo-approvals-'));

describe('the approval demo', () => {
  it('pauses the refund, resumes it in a second runtime over the same file, and refunds once', async () => {
    const before = await demoFolders();
    let output = '';
    const outcome = await runApprovalDemo((text) => {
      output += text;
    }, {});
    expect(outcome).toBe('completed');
    expect(output).toMatch(/\[paused\] refund_order \{"order":"1042","amount":59\.9\} waits for a person/);
    expect(output).toContain('[restart] a new runtime opens the same file; the operator approves');
    expect(output).toContain('outcome: completed; refunds made: 1 (1042)');
    expect(await demoFolders()).toEqual(before);
  });
});
