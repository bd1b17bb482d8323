import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-lazy-loading-'));
  // Module hooks that append every module Node loads to the file named by MODULE_LIST.
  await writeFile(
    join(directory, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(process.env.MODULE_LIST, url + '\\n');\n  return next(url, context);\n}\n",
  );
  await writeFile(
    join(directory, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

it('imports neither acorn, piscina nor typebox: each loads when a session first needs it', async () => {
  const list = join(directory, 'modules.txt');
  await run(
    process.execPath,
    [
      '--import',
      join(directory, 'register.mjs'),
      '--input-type=module',
      '-e',
      "await import('@ghost/code-mode');",
    ],
    { cwd: packageRoot, env: { ...process.env, MODULE_LIST: list }, timeout: 60_000 },
  );
  const modules = (await readFile(list, 'utf8')).split('\n').filter(Boolean);
  expect(modules.some((url) => url.endsWith('/code-mode/dist/index.js'))).toBe(true);
  expect(modules.filter((url) => /\/node_modules\/(acorn|piscina|typebox)\//.test(url))).toEqual([]);
});
