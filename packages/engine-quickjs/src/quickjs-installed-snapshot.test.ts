import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedHostSnapshot } from './host-snapshot-cache.js';

// The engine as a user gets it from the registry: the package's published files (no
// `dist/host.blob`, which `files` leaves out) in an application's node_modules, loaded by plain
// Node, its programs run in bubblewrap.
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const linkedPackages = [
  '@ghost/code-mode',
  '@ghost/core',
  '@ghost/sandbox-bwrap',
  'quickjs-emscripten-core',
  '@jitl/quickjs-wasmfile-release-sync',
];

/** One program in a fresh application process; what it saw of its processes, as JSON on stdout. */
const application = `
import { openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import quickjs from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';

const opened = await openCodeModeSession({ engine: quickjs, sandbox: bwrapSandbox });
const result = await opened.session.execute('6 * 7');
// The next host (the spare) starts once the program has ended.
let processes = [];
for (let attempt = 0; attempt < 400; attempt += 1) {
  processes = await descendantProcesses();
  if (processes.some((found) => found.command.includes('dist/host.cjs'))) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await opened.close();
console.log(JSON.stringify({ result, processes }));
`;

interface ApplicationRun {
  readonly result: { status: string; value: unknown };
  readonly processes: { pid: number; command: string }[];
}

describe('an installed @ghost/engine-quickjs (no snapshot in the package)', () => {
  let root = '';
  let cache = '';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ghost-installed-'));
    cache = join(root, 'cache');
    const installed = join(root, 'node_modules', '@ghost', 'engine-quickjs');
    await mkdir(installed, { recursive: true });
    // What `files` publishes, and the manifest as `publishConfig` rewrites it.
    await cp(join(packageRoot, 'dist'), join(installed, 'dist'), {
      recursive: true,
      filter: (source) => !/\.test\.|host\.blob/.test(source),
    });
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
    await writeFile(
      join(installed, 'package.json'),
      JSON.stringify({ ...manifest, exports: manifest.publishConfig.exports, devDependencies: undefined }),
    );
    for (const name of linkedPackages) {
      const link = join(root, 'node_modules', name);
      await mkdir(dirname(link), { recursive: true });
      await symlink(realpathSync(join(packageRoot, 'node_modules', name)), link);
    }
    await writeFile(join(root, 'application.mjs'), application);
  });

  afterAll(async () => {
    if (root !== '') await rm(root, { recursive: true, force: true });
  });

  function runApplication(): Promise<ApplicationRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(root, 'application.mjs')], {
        cwd: root,
        env: { ...process.env, GHOST_QUICKJS_SNAPSHOT_CACHE: cache },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        stdout += text;
      });
      child.stderr.setEncoding('utf8').on('data', (text: string) => {
        stderr += text;
      });
      child.once('error', reject);
      // It exits on its own once its program ran: the build child running meanwhile keeps nothing alive.
      child.once('exit', (code) => {
        if (code === 0) resolve(JSON.parse(stdout) as ApplicationRun);
        else reject(new Error(`the application exited ${code}: ${stderr}`));
      });
    });
  }

  const isAlive = (pid: number) => existsSync(`/proc/${pid}`);

  it('runs its first programs from the script while it builds the snapshot in the background, then starts hosts from it', {
    timeout: 300_000,
  }, async () => {
    expect(existsSync(join(root, 'node_modules/@ghost/engine-quickjs/dist/host.blob'))).toBe(false);

    const first = await runApplication();
    expect(first.result).toMatchObject({ status: 'completed', value: 42 });
    // The builder checks its new snapshot by starting a host from it (the blob still in its
    // temporary folder): that host is the builder's, not the application's.
    const hosts = first.processes.filter(
      (found) => found.command.includes('dist/host.cjs') && !/\.tmp\/host\.blob/.test(found.command),
    );
    expect(hosts.length).toBeGreaterThan(0);
    for (const host of hosts) expect(host.command).not.toContain('--snapshot-blob');
    const builders = first.processes.filter((found) => found.command.includes('snapshot-cache-worker.js'));
    expect(builders).toHaveLength(1);

    // The builder outlives the application and then ends on its own, its snapshot published.
    const builder = builders[0] as { pid: number };
    for (let waited = 0; isAlive(builder.pid) && waited < 240_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(isAlive(builder.pid)).toBe(false);
    const blob = cachedHostSnapshot(cache);
    expect(blob).toBeDefined();
    expect((await readdir(cache)).filter((name) => /\.(tmp|lock|failed|stale)$/.test(name))).toEqual([]);

    const second = await runApplication();
    expect(second.result).toMatchObject({ status: 'completed', value: 42 });
    const fromSnapshot = second.processes.filter((found) => found.command.includes('dist/host.cjs'));
    expect(fromSnapshot.length).toBeGreaterThan(0);
    for (const host of fromSnapshot) expect(host.command).toContain(`--snapshot-blob=${blob}`);
    // Through bubblewrap, which binds exactly the snapshot file read-only for the host.
    expect(fromSnapshot.map((found) => found.command)).toContainEqual(
      expect.stringContaining(`--ro-bind ${blob} ${blob}`),
    );
    expect(second.processes.map((found) => found.command)).not.toContainEqual(
      expect.stringContaining('snapshot-cache-worker.js'),
    );
  });
});
