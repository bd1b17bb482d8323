import { spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostV8Options } from './host-start.js';

// The engine as a user gets it from the registry: the package's published files in an
// application's node_modules (its dependencies links, as a package manager makes them), loaded by
// plain Node, its programs run in bubblewrap.
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

describe('an installed @ghost/engine-quickjs', () => {
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
      filter: (source) => !/\.test\./.test(source),
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
        env: { ...process.env, XDG_CACHE_HOME: cache },
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
      // It exits on its own once its program ran and its session closed.
      child.once('exit', (code) => {
        if (code === 0) resolve(JSON.parse(stdout) as ApplicationRun);
        else reject(new Error(`the application exited ${code}: ${stderr}`));
      });
    });
  }

  it('runs programs in bubblewrap from the first, its hosts started from the bundled script', {
    timeout: 120_000,
  }, async () => {
    for (const run of [1, 2]) {
      const { result, processes } = await runApplication();
      expect(result, `run ${run}`).toMatchObject({ status: 'completed', value: 42 });
      const hosts = processes.filter((found) => found.command.includes('dist/host.cjs'));
      expect(hosts.length, `run ${run}`).toBeGreaterThan(0);
      for (const host of hosts) {
        expect(host.command).toContain(join(root, 'node_modules/@ghost/engine-quickjs/dist/host.cjs'));
        for (const option of hostV8Options) expect(host.command).toContain(` ${option} `);
        expect(host.command).not.toContain('--snapshot-blob');
      }
      // Through bubblewrap: the host runs in the sandbox, not beside it.
      expect(processes.map((found) => found.command)).toContainEqual(expect.stringMatching(/^\S*bwrap /));
    }
    // The engine builds nothing behind the application's back: the cache holds only what the
    // sandbox's detection wrote there (docs/decisions/2026-12-04-import-and-session-open-time.md).
    const cached = await readdir(join(cache, 'ghost')).catch(() => []);
    expect(cached.filter((name) => !name.startsWith('bwrap-detection-'))).toEqual([]);
  });
});
