import { join } from 'node:path';
import { createSandboxWorkspace, removeSandboxWorkspace } from '@ghost/core/sandbox';
import { describeSandboxConformance } from '@ghost/sandbox-testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createPrlimitSandbox, prlimitSandbox, rlimitArguments } from './prlimit-sandbox.js';

// The shared suite every backend runs: the contract cases, then each escape case this backend's
// capabilities claim to stop (CPU, file size, open files); the rest are skipped, naming the capability.
await describeSandboxConformance({ name: 'prlimit', create: () => prlimitSandbox });

const workspaces: string[] = [];

afterEach(async () => {
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
});

describe('the prlimit example backend', () => {
  it('asks prlimit for each limit given, and never for a core file', () => {
    expect(rlimitArguments({})).toEqual(['--core=0']);
    expect(rlimitArguments({ cpuSeconds: 1.5, fileBytes: 1024.7, openFiles: 64, wallSeconds: 9 })).toEqual([
      '--cpu=2:3',
      '--fsize=1024',
      '--nofile=64',
      '--core=0',
    ]);
  });

  it('says it is unavailable, and how to fix it, when prlimit is missing', async () => {
    const backend = createPrlimitSandbox({ prlimitPath: '/nonexistent/prlimit' });
    const detection = await backend.detect();
    expect(detection.available).toBe(false);
    expect(detection.reason).toMatch(/install util-linux/);
    expect(Object.values(detection.capabilities).every((enforced) => !enforced)).toBe(true);
  });

  it('refuses a command that does not exist before starting anything', async () => {
    const workspace = await createSandboxWorkspace({ prefix: 'ghost-prlimit-' });
    workspaces.push(workspace);
    const command = join(workspace, 'missing-program');
    const spawning = prlimitSandbox.spawn({
      command,
      args: [],
      env: {},
      runtimePaths: [],
      workspace,
      network: 'shared',
    });
    await expect(spawning).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    await expect(spawning).rejects.toThrow(command);
  });
});
