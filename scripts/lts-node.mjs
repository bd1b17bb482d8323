#!/usr/bin/env node
// The suite runs on the machine's Node.js and on the current LTS (docs/testing.md). This script
// installs that LTS from the npm registry's `node-<platform>-<arch>` package into a cache folder
// (nothing global, nothing in the repository) and runs commands under it.
//
//
// The workspace's isolated-vm (engine-v8's dev dependency) is built for the machine's Node.js, so
// `install` also puts the isolated-vm that fits the LTS into the cache, and `run` names it to the
// command in GHOST_TEST_ISOLATED_VM_FROM (the directory it resolves from), which engine-v8's tests
// hand to the engine. Nothing the machine's Node.js resolves from the repository ever sees it.
//
//   node scripts/lts-node.mjs install        install once (setup calls this); safe to run again
//   node scripts/lts-node.mjs path           print the LTS node binary, or fail saying to install
//   node scripts/lts-node.mjs run <args...>  run `node <args...>` under the LTS
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The LTS the suite runs on besides the machine's Node.js; users run 22 and 24. */
const ltsVersion = '24.22.3';
/** The isolated-vm for that LTS (engine-v8's preflight asks 7.0.1 or later on Node 24). */
const isolatedVmVersion = '7.0.1';

const packageName = `node-${process.platform}-${process.arch}`;
const cacheRoot = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ghost', 'node');
const home = join(cacheRoot, `v${ltsVersion}-${process.platform}-${process.arch}`);
const nodeBinary = join(home, 'bin', 'node');
const isolatedVmRoot = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ghost', 'isolated-vm');
/** Where isolated-vm resolves from (`<here>/node_modules/isolated-vm`), one per LTS and version. */
const isolatedVmHome = join(
  isolatedVmRoot,
  `v${isolatedVmVersion}-node-v${ltsVersion}-${process.platform}-${process.arch}`,
);
/** npm as installed beside this Node.js; `npm` from PATH otherwise. */
const npmBesideNode = join(
  dirname(dirname(process.execPath)),
  'lib',
  'node_modules',
  'npm',
  'bin',
  'npm-cli.js',
);

const [command, ...rest] = process.argv.slice(2);

/** Fails with a message that says what to do. */
function fail(message) {
  process.stderr.write(`lts-node: ${message}\n`);
  process.exit(1);
}

/** Whether the LTS node is installed and answers with its version. */
function isInstalled() {
  if (!existsSync(nodeBinary)) return false;
  try {
    return execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim() === `v${ltsVersion}`;
  } catch {
    return false;
  }
}

/** Runs npm (the machine's) with `args` in `cwd`, its output on stderr. */
function npm(args, cwd, environment = {}) {
  const [file, ...prefix] = existsSync(npmBesideNode) ? [process.execPath, npmBesideNode] : ['npm'];
  execFileSync(file, [...prefix, ...args], {
    cwd,
    stdio: ['ignore', 2, 2],
    env: { ...process.env, ...environment },
  });
}

/**
 * Downloads `node-<platform>-<arch>@<ltsVersion>` (npm checks its integrity against the registry),
 * unpacks it beside the final folder and renames it into place: a second installer running at
 * the same time finds the folder there and keeps it.
 */
async function installNode() {
  if (isInstalled()) return;
  await mkdir(cacheRoot, { recursive: true });
  const staging = await mkdtemp(join(cacheRoot, '.staging-'));
  try {
    process.stderr.write(`lts-node: downloading ${packageName}@${ltsVersion} (about 50 MB)\n`);
    npm(['pack', `${packageName}@${ltsVersion}`, '--pack-destination', staging, '--silent'], staging);
    const tarball = (await readdir(staging)).find((name) => name.endsWith('.tgz'));
    if (!tarball) fail(`npm pack gave no tarball for ${packageName}@${ltsVersion}`);
    execFileSync('tar', ['xzf', tarball], { cwd: staging });
    if (!isInstalled()) {
      await rm(home, { recursive: true, force: true });
      try {
        await rename(join(staging, 'package'), home);
      } catch (error) {
        // Another installer renamed its copy in first: keep it.
        if (!isInstalled()) throw error;
      }
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  if (!isInstalled()) fail(`${nodeBinary} does not run as v${ltsVersion} after installing it`);
}

/** Whether the cached isolated-vm loads under the LTS node, as engine-v8's host loads it. */
function isolatedVmLoads(directory) {
  const script = `require(${JSON.stringify(join(directory, 'node_modules', 'isolated-vm'))}); process.stdout.write('loaded')`;
  try {
    return (
      execFileSync(nodeBinary, ['--no-node-snapshot', '-e', script], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }) === 'loaded'
    );
  } catch {
    return false;
  }
}

/**
 * Installs isolated-vm@<isolatedVmVersion> for the LTS into the cache. npm runs under the
 * machine's Node.js, so its install script is skipped (it would build for the wrong Node.js): the
 * package ships prebuilt addons, picked when the LTS loads it. Where none fits this platform, it
 * is built with node-gyp against the LTS's own headers (the node-<platform>-<arch> package has
 * them in include/node), with the LTS node first on PATH.
 */
async function installIsolatedVm() {
  if (isolatedVmLoads(isolatedVmHome)) return;
  await mkdir(isolatedVmRoot, { recursive: true });
  const staging = await mkdtemp(join(isolatedVmRoot, '.staging-'));
  try {
    process.stderr.write(`lts-node: installing isolated-vm@${isolatedVmVersion} for Node ${ltsVersion}\n`);
    await writeFile(join(staging, 'package.json'), '{ "private": true }\n');
    npm(
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        `isolated-vm@${isolatedVmVersion}`,
      ],
      staging,
    );
    if (!isolatedVmLoads(staging)) {
      process.stderr.write(
        'lts-node: no prebuilt isolated-vm addon loads here: building it (needs python3, make, a C++ compiler)\n',
      );
      npm(['rebuild', 'isolated-vm', '--foreground-scripts'], staging, {
        PATH: `${join(home, 'bin')}:${process.env.PATH}`,
        npm_config_nodedir: home,
      });
    }
    if (!isolatedVmLoads(staging))
      fail(
        `isolated-vm@${isolatedVmVersion} does not load in Node ${ltsVersion} after installing it (in ${staging})`,
      );
    if (!isolatedVmLoads(isolatedVmHome)) {
      await rm(isolatedVmHome, { recursive: true, force: true });
      try {
        await rename(staging, isolatedVmHome);
      } catch (error) {
        // Another installer renamed its copy in first: keep it.
        if (!isolatedVmLoads(isolatedVmHome)) throw error;
      }
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (command === 'install') {
  await installNode();
  await installIsolatedVm();
  process.stdout.write(`${nodeBinary}\n`);
} else if (command === 'path') {
  if (!isInstalled())
    fail(
      `Node ${ltsVersion} is not installed in ${home}: run 'npm run setup' (or 'node scripts/lts-node.mjs install')`,
    );
  process.stdout.write(`${nodeBinary}\n`);
} else if (command === 'run') {
  if (!isInstalled())
    fail(
      `Node ${ltsVersion} is not installed in ${home}: run 'npm run setup' (or 'node scripts/lts-node.mjs install')`,
    );
  const env = { ...process.env, PATH: `${join(home, 'bin')}:${process.env.PATH}` };
  if (isolatedVmLoads(isolatedVmHome)) env.GHOST_TEST_ISOLATED_VM_FROM = isolatedVmHome;
  else
    process.stderr.write(
      "lts-node: isolated-vm for this Node is not installed, so the V8 engine's tests skip: run 'node scripts/lts-node.mjs install'\n",
    );
  const child = spawn(nodeBinary, rest, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  fail('usage: node scripts/lts-node.mjs install | path | run <node arguments...>');
}
