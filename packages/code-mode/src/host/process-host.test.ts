import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const hostEntry = fileURLToPath(new URL('../../dist/host/index.js', import.meta.url));

it('ends a host started without the parent channel with exit code 70 and a message, not an unhandled rejection', async () => {
  // fd 3 is the parent's channel; this process is started without it.
  const script = `import { runProcessHost } from ${JSON.stringify(hostEntry)};
void runProcessHost({ engine: 'none' });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  expect(code).toBe(70);
  expect(stderr).toMatch(/^ghost host: /);
  expect(stderr).not.toMatch(/Unhandled|triggerUncaughtException/);
});
