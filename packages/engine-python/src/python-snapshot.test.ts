import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonSnapshot, snapshotDirectory } from './python-snapshot.js';

// Real Pyodide in a real child process: making a snapshot takes seconds, more on a busy machine.
describe("the Python engine's Pyodide snapshot", { timeout: 300_000 }, () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'ghost-python-snapshot-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('is made once, whole, in place of a stale one, and leaves no temporary file', async () => {
    const stale = join(directory, 'python-engine-pyodide-0.0.1-0000000000000000.snapshot');
    await writeFile(stale, 'an older version');
    const made = await pythonSnapshot(directory);
    expect(made).toBeDefined();
    const path = made as string;
    expect((await readFile(path)).subarray(0, 8).toString()).toBe('GHOSTPY1');
    expect(await readdir(directory)).toEqual([path.slice(directory.length + 1)]);
    const madeAt = (await stat(path)).mtimeMs;
    expect(await pythonSnapshot(directory)).toBe(path);
    expect((await stat(path)).mtimeMs).toBe(madeAt);
  });

  it('is made again when damaged', async () => {
    const [name] = await readdir(directory);
    const path = join(directory, name as string);
    const file = await readFile(path);
    file[file.length - 1] = (file.at(-1) ?? 0) ^ 0xff;
    await writeFile(path, file);
    expect(await pythonSnapshot(directory)).toBe(path);
    const remade = await readFile(path);
    expect(remade.equals(file)).toBe(false);
    expect(await readdir(directory)).toEqual([name]);
  });

  it('is passed over, with a warning, where it cannot be written', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const file = join(directory, 'a-file');
      await writeFile(file, '');
      expect(await pythonSnapshot(join(file, 'cache'))).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => (warning as Error & { code?: string }).code)).toContain(
        'PYTHON_SNAPSHOT_UNAVAILABLE',
      );
    } finally {
      process.off('warning', onWarning);
      await rm(join(directory, 'a-file'), { force: true });
    }
  });

  it("lives in the user's cache directory", () => {
    expect(snapshotDirectory({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/ghost');
    expect(snapshotDirectory({})).toMatch(/\/\.cache\/ghost$|ghost-cache$/);
  });
});
