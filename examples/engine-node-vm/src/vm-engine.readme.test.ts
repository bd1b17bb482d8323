import { openCodeModeSession } from '@ghost/code-mode';
import { expect, it } from 'vitest';
import { vmEngine } from './vm-engine.js';

// The README's snippet, as written there.
it("runs the README's program", async () => {
  const { session, close } = await openCodeModeSession({ engine: vmEngine, sandbox: 'unrestricted' });
  const result = await session.execute('const doubled = [1, 2, 3].map((n) => n * 2); doubled');
  expect(result).toEqual({ status: 'completed', output: '', value: [2, 4, 6] });
  await close();
});
