import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openCodeModeSession } from '@ghost/code-mode';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findIsolatedVm,
  findIsolatedVmAddon,
  IsolatedVmUnavailableError,
  isolatedVmProblem,
  minimumIsolatedVm,
} from './isolated-vm-check.js';
import { createV8Engine } from './v8-engine.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
let directories: string[] = [];

afterEach(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
  directories = [];
});

/** A project directory whose node_modules/isolated-vm is what `files` say (nothing when omitted). */
async function project(files?: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ghost-ivm-check-'));
  directories.push(root);
  if (files) {
    const installed = join(root, 'node_modules', 'isolated-vm');
    await mkdir(join(installed, 'out'), { recursive: true });
    for (const [name, text] of Object.entries(files)) await writeFile(join(installed, name), text);
  }
  return root;
}

const manifest = (version: string) =>
  JSON.stringify({ name: 'isolated-vm', version, main: 'isolated-vm.js' });
const entry = "module.exports = require('./out/isolated_vm').ivm;";

describe('isolatedVmProblem', () => {
  it('finds nothing wrong with the isolated-vm this workspace installs on Node 20, and names the version to install on later ones', async () => {
    const problem = await isolatedVmProblem(packageRoot);
    if (minimumIsolatedVm(process.version) === '5.0.4') expect(problem).toBeUndefined();
    else expect(problem).toContain(`install ${minimumIsolatedVm(process.version)} or later`);
  });

  it('says to install the peer dependency when it is missing, naming the version for the running Node.js', async () => {
    const root = await project();
    expect(await isolatedVmProblem(root)).toMatch(
      /needs the isolated-vm package, a peer dependency .*'pnpm add isolated-vm@\^\d'.*6\.2\.0 or later on Node 22/,
    );
    expect(await isolatedVmProblem(root, 'v20.20.2')).toMatch(
      /'pnpm add isolated-vm@\^5' \(5\.0\.4 or later for Node\.js v20\.20\.2/,
    );
    expect(await isolatedVmProblem(root, 'v22.12.0')).toMatch(
      /'pnpm add isolated-vm@\^6' \(6\.2\.0 or later for Node\.js v22\.12\.0/,
    );
    expect(await isolatedVmProblem(root, 'v24.22.3')).toMatch(
      /'pnpm add isolated-vm@\^7' \(7\.0\.1 or later for Node\.js v24\.22\.3/,
    );
  });

  it('says the addon was never built, and how to allow the build, when the .node file is missing', async () => {
    const root = await project({ 'package.json': manifest('5.0.4'), 'isolated-vm.js': entry });
    expect(await isolatedVmProblem(root, 'v20.20.2')).toMatch(
      /isolated-vm 5\.0\.4 is installed at .*, but its native addon was never built .*onlyBuiltDependencies: \[isolated-vm\].*npm rebuild isolated-vm/,
    );
  });

  it('refuses 5.x on Node 22 and later, naming the fixed versions and the advisory', async () => {
    const root = await project({ 'package.json': manifest('5.0.4'), 'isolated-vm.js': entry });
    expect(await isolatedVmProblem(root, 'v22.12.0')).toMatch(
      /isolated-vm 5\.0\.4 .* is too old for Node\.js v22\.12\.0: install 6\.2\.0 or later .*GHSA-864f-rcv7-6rh4/,
    );
    expect(minimumIsolatedVm('v20.19.0')).toBe('5.0.4');
    expect(minimumIsolatedVm('v22.0.0')).toBe('6.2.0');
    expect(minimumIsolatedVm('v24.1.0')).toBe('7.0.1');
  });

  it('loads a prebuilt addon for this platform (6.x on) as the host would, reporting what loading it says', async () => {
    const root = await project({
      'package.json': manifest('7.0.1'),
      'isolated-vm.js': "module.exports = require('node-gyp-build')(__dirname).ivm;",
    });
    const prebuilds = join(
      root,
      'node_modules',
      'isolated-vm',
      'prebuilds',
      `${process.platform}-${process.arch}`,
    );
    await mkdir(prebuilds, { recursive: true });
    await writeFile(
      join(prebuilds, `isolated-vm.abi${process.versions.modules}.glibc.node`),
      'not a shared object',
    );
    expect(await isolatedVmProblem(root, 'v24.22.3')).toMatch(
      /isolated-vm 7\.0\.1 at .* fails to load in Node\.js v24\.22\.3: Error: .*isolated-vm\.abi\d+\.glibc\.node: .*Then reinstall/,
    );
  });

  it('reports the loader’s own error when the addon fails to load (a build for another Node, say)', async () => {
    const root = await project({
      'package.json': manifest('5.0.4'),
      'isolated-vm.js': entry,
      'out/isolated_vm.node': 'not a shared object',
    });
    expect(await isolatedVmProblem(root, 'v20.20.2')).toMatch(
      /isolated-vm 5\.0\.4 at .* fails to load in Node\.js v20\.20\.2: Error: .*isolated_vm\.node: .*Then reinstall/,
    );
  });
});

describe('findIsolatedVmAddon', () => {
  it('takes an install-time build first, else the prebuilt addon for this Node.js ABI and libc', async () => {
    const root = await project({ 'package.json': manifest('7.0.1') });
    const installed = findIsolatedVm(root);
    expect(installed).toEqual({ directory: join(root, 'node_modules', 'isolated-vm'), version: '7.0.1' });
    const directory = installed?.directory ?? '';
    expect(findIsolatedVmAddon(directory)).toBeUndefined();
    const prebuilds = join(directory, 'prebuilds', `${process.platform}-${process.arch}`);
    await mkdir(prebuilds, { recursive: true });
    const abi = process.versions.modules;
    for (const name of [
      `isolated-vm.abi1.glibc.node`,
      `isolated-vm.abi${abi}.musl.node`,
      `isolated-vm.abi${abi}.glibc.node`,
    ]) {
      await writeFile(join(prebuilds, name), '');
    }
    expect(findIsolatedVmAddon(directory)).toBe(join(prebuilds, `isolated-vm.abi${abi}.glibc.node`));
    await mkdir(join(directory, 'build', 'Release'), { recursive: true });
    await writeFile(join(directory, 'build', 'Release', 'isolated_vm.node'), '');
    expect(findIsolatedVmAddon(directory)).toBe(join(directory, 'build', 'Release', 'isolated_vm.node'));
  });
});

describe('the v8 engine without a working isolated-vm', () => {
  it('refuses to open a session with an IsolatedVmUnavailableError that says what to do, starting nothing', async () => {
    const engine = createV8Engine({ resolveFrom: await project() });
    const opening = openCodeModeSession({ engine, sandbox: 'unrestricted' });
    await expect(opening).rejects.toBeInstanceOf(IsolatedVmUnavailableError);
    await expect(opening).rejects.toMatchObject({
      code: 'ENGINE_V8_UNAVAILABLE',
      message: expect.stringMatching(/'pnpm add isolated-vm@\^\d'/),
    });
  });
});
