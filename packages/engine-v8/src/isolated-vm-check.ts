import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GhostError } from '@ghost/core';
import { type GhostErrorInit, markErrorClass } from '@ghost/core/plugin';

/**
 * The V8 engine cannot run here: `isolated-vm` (its peer dependency) is not installed, its
 * native addon was not built, it is too old for this Node.js, or it fails to load. The message
 * says which, and what to do.
 */
export class IsolatedVmUnavailableError extends GhostError {
  static {
    markErrorClass(IsolatedVmUnavailableError, 'IsolatedVmUnavailableError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'ENGINE_V8_UNAVAILABLE';
  /** The engine that cannot run, `v8`. */
  readonly engine: string | undefined;

  constructor(
    message: string,
    init: GhostErrorInit<'ENGINE_V8_UNAVAILABLE'> & { readonly engine?: string } = {},
  ) {
    super(message, { ...init, code: 'ENGINE_V8_UNAVAILABLE' });
    this.engine = init.engine;
  }
}

/** Where an installed isolated-vm is, and what it says of itself. */
export interface IsolatedVmInstall {
  /** The package's directory. */
  readonly directory: string;
  readonly version: string;
}

/**
 * Finds the isolated-vm that Node resolves from `directory`: the one the preflight checks and the
 * engine tells its host to load.
 */
export function findIsolatedVm(directory: string): IsolatedVmInstall | undefined {
  for (let current = directory; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules', 'isolated-vm');
    const manifest = join(candidate, 'package.json');
    if (existsSync(manifest)) {
      const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
      return { directory: candidate, version: typeof version === 'string' ? version : '0.0.0' };
    }
    if (dirname(current) === current) return undefined;
  }
}

/** The oldest isolated-vm this Node.js can use (GHSA-864f-rcv7-6rh4 for Node 22 and later). */
export function minimumIsolatedVm(nodeVersion: string): string {
  const major = Number(/^v?(\d+)/.exec(nodeVersion)?.[1] ?? 0);
  if (major >= 24) return '7.0.1';
  if (major >= 22) return '6.2.0';
  return '5.0.4';
}

function majorOf(version: string): string {
  return version.split('.')[0] ?? version;
}

function isOlder(version: string, minimum: string): boolean {
  const parse = (text: string) =>
    text
      .split(/[.+-]/)
      .slice(0, 3)
      .map((part) => Number(part) || 0);
  const [left, right] = [parse(version), parse(minimum)];
  for (let index = 0; index < 3; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference < 0;
  }
  return false;
}

/**
 * The native addon of the isolated-vm package in `directory` that this Node.js loads, or
 * `undefined` when there is none: a build from install time (`build/Release/`, or `out/` in 5.x)
 * first, then a prebuilt one shipped for this platform and Node.js ABI (6.x on; glibc or musl on
 * Linux). isolated-vm's own entry is `require(<that addon>).ivm`, found by node-gyp-build from
 * 6.x on; the engine finds it here, where it may read the file system, so the sandboxed host
 * loads the same file without node-gyp-build probing paths (`/etc/alpine-release`) Node's
 * permission model refuses.
 */
export function findIsolatedVmAddon(directory: string): string | undefined {
  const builds = [
    join(directory, 'build', 'Release', 'isolated_vm.node'),
    join(directory, 'out', 'isolated_vm.node'),
  ];
  for (const built of builds) {
    if (existsSync(built)) return built;
  }
  const prebuilds = join(directory, 'prebuilds', `${process.platform}-${process.arch}`);
  if (!existsSync(prebuilds)) return undefined;
  const libc =
    process.platform !== 'linux' ? undefined : existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
  const abi = `abi${process.versions.modules}`;
  for (const name of readdirSync(prebuilds).sort()) {
    const tags = name.split('.');
    if (!name.endsWith('.node') || !tags.includes(abi)) continue;
    const libcTag = tags.find((tag) => tag === 'glibc' || tag === 'musl');
    if (libcTag === undefined || libcTag === libc) return join(prebuilds, name);
  }
  return undefined;
}

const reinstall =
  "With pnpm 10, allow its build first (pnpm-workspace.yaml: onlyBuiltDependencies: [isolated-vm]); node-gyp needs python3, make and a C++ compiler, and offline the Node headers (npm_config_nodedir=/usr where /usr/include/node exists). Then reinstall: 'pnpm install' or 'npm rebuild isolated-vm'.";

/**
 * What is wrong with the isolated-vm found from `directory` for this Node.js, or `undefined`
 * when it loads. Loading is tried in a child `node --no-node-snapshot`, as the host loads it,
 * so a broken addon never touches this process.
 */
export async function isolatedVmProblem(
  directory: string,
  nodeVersion: string = process.version,
): Promise<string | undefined> {
  const install = findIsolatedVm(directory);
  const minimum = minimumIsolatedVm(nodeVersion);
  if (install === undefined) {
    return `The 'v8' engine needs the isolated-vm package, a peer dependency it does not install itself: run 'pnpm add isolated-vm@^${majorOf(minimum)}' (${minimum} or later for Node.js ${nodeVersion}; in general 5.0.4 or later on Node 20, 6.2.0 or later on Node 22, 7.0.1 or later on Node 24).`;
  }
  if (isOlder(install.version, minimum)) {
    return `isolated-vm ${install.version} (at ${install.directory}) is too old for Node.js ${nodeVersion}: install ${minimum} or later ('pnpm add isolated-vm@^${majorOf(minimum)}'); older builds are affected by GHSA-864f-rcv7-6rh4 or do not build on this Node.js.`;
  }
  const addon = findIsolatedVmAddon(install.directory);
  if (addon === undefined) {
    const built = join(install.directory, 'out', 'isolated_vm.node');
    return `isolated-vm ${install.version} is installed at ${install.directory}, but its native addon was never built (${built} is missing, and no prebuilt addon for ${process.platform}-${process.arch} and Node.js ABI ${process.versions.modules} came with it). ${reinstall}`;
  }
  const failure = await tryLoading(addon);
  if (failure !== undefined) {
    return `isolated-vm ${install.version} at ${install.directory} fails to load in Node.js ${nodeVersion}: ${failure} ${reinstall}`;
  }
  return undefined;
}

/** Loads `addon` as the host does, in a child. */
function tryLoading(addon: string): Promise<string | undefined> {
  const script = `if (!require(${JSON.stringify(addon)}).ivm) throw new Error('it has no ivm export'); process.stdout.write('loaded')`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--no-node-snapshot', '-e', script],
      { env: {}, timeout: 30_000, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error && stdout === 'loaded') return resolve(undefined);
        const line =
          /^\w*Error: .*$/m.exec(stderr)?.[0] ?? (error as Error | null)?.message ?? 'it did not load';
        resolve(line.trim().replace(/\.?$/, '.'));
      },
    );
  });
}
