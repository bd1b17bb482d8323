import { fileURLToPath } from 'node:url';
import { modulesLoadedBy } from '@ghost/vitest-config/modules-loaded';
import { expect, it } from 'vitest';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

it('imports neither acorn, piscina nor typebox: each loads when a session first needs it', async () => {
  const { modules } = await modulesLoadedBy("await import('@ghost/code-mode');", { cwd: packageRoot });
  expect(modules.some((url) => url.endsWith('/code-mode/dist/index.js'))).toBe(true);
  expect(modules.filter((url) => /\/node_modules\/(acorn|piscina|typebox)\//.test(url))).toEqual([]);
});
