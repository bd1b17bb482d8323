import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const register = fileURLToPath(new URL('./module-list-register.js', import.meta.url));

export async function modulesLoadedBy(source, { cwd }) {
  const directory = await mkdtemp(join(tmpdir(), 'ghost-modules-loaded-'));
  try {
    const list = join(directory, 'modules.txt');
    const { stdout } = await run(
      process.execPath,
      ['--import', register, '--input-type=module', '-e', source],
      {
        cwd,
        env: { ...process.env, MODULE_LIST: list },
        timeout: 60_000,
      },
    );
    const modules = (await readFile(list, 'utf8')).split('\n').filter(Boolean);
    return { stdout, modules };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
