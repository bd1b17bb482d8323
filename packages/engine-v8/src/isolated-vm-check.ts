import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GhostError, type GhostErrorOptions } from '@ghost/core';

/**
 * The V8 engine cannot run here: `isolated-vm` (its peer dependency) is not installed, its
 * native addon was not built, it is too old for this Node.js, or it fails to load. The message
 * says which, and what to do.
 */
export class IsolatedVmUnavailableError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'ENGINE_V8_UNAVAILABLE', ...options });
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
 * The paths the host reads to load `install`: the package, and the packages it requires when it
 * loads (`node-gyp-build`, which picks the prebuilt addon for this Node.js, from 6.x on). Its
 * install-time downloader (`prebuild-install`, 5.x) is never loaded by the host.
 */
export function isolatedVmRuntimePaths(install: IsolatedVmInstall): string[] {
  const manifestPath = join(install.directory, 'package.json');
  const { dependencies = {} } = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const paths = [install.directory];
  const requireFromPackage = createRequire(manifestPath);
  for (const name of Object.keys(dependencies)) {
    if (name === 'prebuild-install') continue;
    try {
      paths.push(dirname(requireFromPackage.resolve(`${name}/package.json`)));
    } catch {
      // Not installed: loading isolated-vm fails, and the preflight says so.
    }
  }
  return paths;
}

/**
 * Whether `directory` (an isolated-vm package) holds a native addon: built at install time into
 * `out/` (5.x) or `build/Release/`, or shipped prebuilt for this platform in `prebuilds/` (6.x
 * on, loaded through node-gyp-build).
 */
function hasAddon(directory: string): boolean {
  return (
    existsSync(join(directory, 'out', 'isolated_vm.node')) ||
    existsSync(join(directory, 'build', 'Release', 'isolated_vm.node')) ||
    existsSync(join(directory, 'prebuilds', `${process.platform}-${process.arch}`))
  );
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
  if (!hasAddon(install.directory)) {
    const addon = join(install.directory, 'out', 'isolated_vm.node');
    return `isolated-vm ${install.version} is installed at ${install.directory}, but its native addon was never built (${addon} is missing, and no prebuilt addon for ${process.platform}-${process.arch} came with it). ${reinstall}`;
  }
  const failure = await tryLoading(install.directory);
  if (failure !== undefined) {
    return `isolated-vm ${install.version} at ${install.directory} fails to load in Node.js ${nodeVersion}: ${failure} ${reinstall}`;
  }
  return undefined;
}

function tryLoading(directory: string): Promise<string | undefined> {
  const script = `require(${JSON.stringify(directory)}); process.stdout.write('loaded')`;
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
