import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxBackendV1 } from '@ghost/core';
import {
  createSandboxWorkspace,
  removeSandboxWorkspace,
  type SandboxCapabilities,
  type SandboxExit,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { expect } from 'vitest';
import { killProcessesWithMarker } from './outside-processes.js';

/** A safety net on every spawn: a case that hangs still ends, and says so, before vitest's timeout. */
const safetyWallSeconds = 20;

/** How long a probe may run before the suite gives up on it. */
const defaultProbeMilliseconds = 15_000;

/** What a spawn overrides in the base spec; `limits` are merged with the safety net. */
export type SpawnOverrides = Partial<Omit<SandboxSpawnSpec, 'workspace'>> & { readonly workspace?: string };

/** A probe that ran to its end. */
export interface ProbeRun {
  readonly process: SandboxProcess;
  readonly exit: SandboxExit;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMilliseconds: number;
}

/** What the harness needs to know about the backend under test. */
export interface HarnessSetup {
  readonly backend: SandboxBackendV1;
  readonly capabilities: SandboxCapabilities;
  /** The real path of the Node binary, the command of every Node probe. */
  readonly nodePath: string;
  /** A read-only runtime path of every spawn, holding the native probe. */
  readonly probeDirectory: string;
  /** The compiled native probe, when there is one. */
  readonly nativeProbePath: string | undefined;
}

/**
 * Runs probes in the backend under test and owns everything a case creates: processes, temp dirs,
 * servers, environment variables. `cleanup()` after each case undoes all of it, even on failure.
 */
export class SandboxHarness {
  readonly backend: SandboxBackendV1;
  readonly capabilities: SandboxCapabilities;
  readonly nodePath: string;
  readonly probeDirectory: string;
  readonly #nativeProbePath: string | undefined;
  readonly #cleanups: (() => unknown)[] = [];

  constructor(setup: HarnessSetup) {
    this.backend = setup.backend;
    this.capabilities = setup.capabilities;
    this.nodePath = setup.nodePath;
    this.probeDirectory = setup.probeDirectory;
    this.#nativeProbePath = setup.nativeProbePath;
  }

  /** The native probe; cases that call it declare the `'native probe'` requirement. */
  get nativeProbePath(): string {
    if (this.#nativeProbePath === undefined) throw new Error('The native probe was not compiled.');
    return this.#nativeProbePath;
  }

  /** Registers something to undo after the case, last registered first. */
  defer(cleanup: () => unknown): void {
    this.#cleanups.push(cleanup);
  }

  /** Undoes everything the case created; rejects with every failure once all ran. */
  async cleanup(): Promise<void> {
    const failures: unknown[] = [];
    for (let cleanup = this.#cleanups.pop(); cleanup !== undefined; cleanup = this.#cleanups.pop()) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'Cleaning up after the case failed.');
  }

  /** A unique string to put in a probe's arguments, so the suite finds its processes from outside. */
  marker(): string {
    const marker = `ghost-testkit-marker-${randomUUID()}`;
    this.defer(() => killProcessesWithMarker(marker));
    return marker;
  }

  /** A fresh temp dir outside any workspace, removed after the case. */
  async outsideDirectory(prefix = 'ghost-testkit-outside-'): Promise<string> {
    const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
    this.defer(() => rm(path, { recursive: true, force: true }));
    return path;
  }

  /**
   * A fresh workspace, made as every caller of a backend makes one (`createSandboxWorkspace()`, in
   * the system temp folder's private `ghost-sandbox-<uid>`), removed after the case unless a
   * sandbox's `close()` already did.
   */
  async workspace(): Promise<string> {
    const path = await createSandboxWorkspace({ prefix: 'ghost-testkit-workspace-' });
    this.defer(() => removeSandboxWorkspace(path));
    return path;
  }

  /** A secret file in a temp dir outside the workspace: what a probe must not read. */
  async outsideSecret(): Promise<{ directory: string; file: string; content: string }> {
    const directory = await this.outsideDirectory('ghost-testkit-secret-');
    const file = join(directory, 'secret.txt');
    const content = `ghost-testkit-secret-${randomBytes(16).toString('hex')}`;
    await writeFile(file, content, { mode: 0o600 });
    return { directory, file, content };
  }

  /** Sets a variable in this (the parent's) environment for the rest of the case. */
  setParentEnvironment(name: string, value: string): void {
    const previous = process.env[name];
    process.env[name] = value;
    this.defer(() => {
      if (previous === undefined) delete process.env[name];
      else process.env[name] = previous;
    });
  }

  /**
   * The spec every probe starts from, built from what the backend declares: Node with no
   * environment, network `'none'` only where the backend isolates it (it must reject it
   * otherwise), and no limit but the wall-clock safety net, which every backend enforces.
   */
  async spec(overrides: SpawnOverrides = {}): Promise<SandboxSpawnSpec> {
    const workspace = overrides.workspace ?? (await this.workspace());
    return {
      command: this.nodePath,
      args: [],
      env: {},
      runtimePaths: [this.nodePath, this.probeDirectory],
      network: this.capabilities.networkIsolation ? 'none' : 'shared',
      ...overrides,
      workspace,
      limits: { wallSeconds: safetyWallSeconds, ...overrides.limits },
    };
  }

  /** Spawns in the backend; the process is closed after the case. */
  async spawn(overrides: SpawnOverrides = {}): Promise<SandboxProcess> {
    const child = await this.backend.spawn(await this.spec(overrides));
    this.defer(() => child.close());
    return child;
  }

  /** Spawns Node running `script` with `-e`; `scriptArguments` become `process.argv.slice(1)`. */
  spawnNode(script: string, overrides: SpawnOverrides = {}, scriptArguments: readonly string[] = []) {
    return this.spawn({ ...overrides, command: this.nodePath, args: ['-e', script, ...scriptArguments] });
  }

  /** Runs Node on `script` to its end. */
  runNode(script: string, overrides: SpawnOverrides = {}, scriptArguments: readonly string[] = []) {
    return this.run(() => this.spawnNode(script, overrides, scriptArguments));
  }

  /** Runs the native probe in `mode` to its end. */
  runNative(mode: string, modeArguments: readonly string[] = [], overrides: SpawnOverrides = {}) {
    return this.run(() =>
      this.spawn({ ...overrides, command: this.nativeProbePath, args: [mode, ...modeArguments] }),
    );
  }

  /** Waits for a spawned probe to exit; kills it and fails when it runs past `timeoutMilliseconds`. */
  async run(
    start: () => Promise<SandboxProcess>,
    timeoutMilliseconds = defaultProbeMilliseconds,
  ): Promise<ProbeRun> {
    const startedAt = performance.now();
    const child = await start();
    const exit = await exitWithin(child, timeoutMilliseconds);
    if (exit === undefined) {
      child.kill();
      throw new Error(
        `The probe did not exit within ${timeoutMilliseconds / 1_000} s. stdout: ${child.stdout.text.slice(0, 500)} stderr: ${child.stderr.text.slice(0, 500)}`,
      );
    }
    return {
      process: child,
      exit,
      stdout: child.stdout.text,
      stderr: child.stderr.text,
      elapsedMilliseconds: performance.now() - startedAt,
    };
  }

  /** Waits until the process printed `ready` on stdout; fails with its output if it exits or takes too long. */
  async waitForReady(child: SandboxProcess, timeoutMilliseconds = defaultProbeMilliseconds): Promise<void> {
    let exit: SandboxExit | undefined;
    void child.exited.then((value) => {
      exit = value;
    });
    const deadline = performance.now() + timeoutMilliseconds;
    while (!child.stdout.text.includes('ready')) {
      if (exit !== undefined || performance.now() > deadline) {
        throw new Error(
          `The probe ${exit === undefined ? 'did not get ready in time' : `exited before it was ready (${JSON.stringify(exit)})`}. stdout: ${child.stdout.text.slice(0, 500)} stderr: ${child.stderr.text.slice(0, 1_000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The JSON a probe printed as its last stdout line; fails the case with diagnostics when none. */
  report<Report>(run: ProbeRun): Report {
    const lastLine = run.stdout.trim().split('\n').at(-1) ?? '';
    try {
      return JSON.parse(lastLine) as Report;
    } catch {
      throw new Error(
        `The probe printed no JSON report (exit ${JSON.stringify(run.exit)}). stdout: ${run.stdout.slice(0, 500)} stderr: ${run.stderr.slice(0, 1_000)}`,
      );
    }
  }

  /** The JSON report a probe that is still running printed as its `ready` line. */
  readyReport<Report>(child: SandboxProcess): Report {
    const line = child.stdout.text.split('\n').find((candidate) => candidate.includes('"ready":true'));
    try {
      return JSON.parse(line ?? '') as Report;
    } catch {
      throw new Error(
        `The probe printed no ready report. stdout: ${child.stdout.text.slice(0, 500)} stderr: ${child.stderr.text.slice(0, 1_000)}`,
      );
    }
  }

  /** The next program runs normally: the backend is still usable after whatever the case did. */
  async expectNextProgramRuns(): Promise<void> {
    const next = await this.runNode("process.stdout.write('next program ran')");
    expect(next.exit, `the next program failed; stderr: ${next.stderr}`).toEqual({ code: 0, signal: null });
    expect(next.stdout).toBe('next program ran');
  }
}

/** The process's exit, or undefined when it has not exited within `milliseconds`. */
export async function exitWithin(
  child: SandboxProcess,
  milliseconds: number,
): Promise<SandboxExit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), milliseconds);
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
