import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigurationError, SandboxUnavailableError } from '@ghost/core';
import type { SandboxCapabilities, SandboxLimits } from '@ghost/core/sandbox';
import { expect } from 'vitest';
import { withoutWorkingDirectory } from './backend-environment.js';
import type { ConformanceCase, SuiteContext } from './conformance-case.js';
import { processesWithMarker } from './outside-processes.js';
import {
  echoChannelProbe,
  floodOutputProbe,
  greetChannelsProbe,
  processReportProbe,
  waitForeverProbe,
} from './probes/contract-probes.js';
import { exitWithin } from './sandbox-harness.js';
import { readBytes, readLine } from './stream-reading.js';

/** Every capability flag of the contract, to check a detection reports all of them and nothing else. */
const capabilityNames: readonly (keyof SandboxCapabilities)[] = [
  'processTreeOwnership',
  'subprocessDenial',
  'networkIsolation',
  'filesystemIsolation',
  'memoryLimit',
  'cpuLimit',
  'fileSizeLimit',
  'openFilesLimit',
  'processLimit',
  'syscallFilter',
  'environmentIsolation',
];

/** Each limit a backend may refuse, with the capability that lets it enforce the limit, and a value to ask for. */
const limitsByCapability: readonly [keyof SandboxLimits, keyof SandboxCapabilities, number][] = [
  ['memoryBytes', 'memoryLimit', 256 * 1024 * 1024],
  ['cpuSeconds', 'cpuLimit', 10],
  ['fileBytes', 'fileSizeLimit', 1024 * 1024],
  ['openFiles', 'openFilesLimit', 256],
  ['processes', 'processLimit', 64],
];

/** Big enough to be truncated by any sensible diagnostics cap, small enough to write in a blink. */
const floodBytes = 8 * 1024 * 1024;

/** How long a killed or aborted process may take to be reported as exited. */
const exitAfterKillMilliseconds = 5_000;

/** The cases every available backend must pass: the `SandboxBackendV1` contract itself. */
export function contractCases(context: SuiteContext): ConformanceCase[] {
  return [...spawnCases(context.capabilities), ...streamCases(), ...endingCases(), ...refusalCases(context)];
}

/** A sandbox-v1 backend runs the command with exactly its arguments, environment and directory. */
function spawnCases(capabilities: SandboxCapabilities): ConformanceCase[] {
  return [
    {
      title: 'is a sandbox-v1 backend that reports every capability as a boolean',
      run: async (harness) => {
        const { backend } = harness;
        expect(backend).toMatchObject({ kind: 'sandbox', specificationVersion: 'sandbox-v1' });
        expect(backend.name).toEqual(expect.any(String));
        expect(backend.platforms).toContain(process.platform);
        const detection = await backend.detect();
        expect(detection.available).toBe(true);
        expect(Object.keys(detection.capabilities).sort()).toEqual([...capabilityNames].sort());
        for (const name of capabilityNames) expect(typeof detection.capabilities[name], name).toBe('boolean');
      },
    },
    {
      title: 'runs the command with exactly its arguments, environment and working directory',
      run: async (harness) => {
        const workspace = await harness.workspace();
        const cwd = join(workspace, 'nested dir');
        await mkdir(cwd);
        const scriptArguments = ['plain', 'with space', '', 'ünïcödé ✓', '--not-an-option'];
        const env = { GHOST_TESTKIT_VISIBLE: 'yes', GHOST_TESTKIT_EMPTY: '' };
        const run = await harness.runNode(processReportProbe, { workspace, cwd, env }, scriptArguments);
        const report = harness.report<{
          argv: string[];
          execArgv: string[];
          env: Record<string, string>;
          cwd: string;
        }>(run);
        expect(report.argv).toEqual(scriptArguments);
        expect(report.execArgv).toEqual(['-e', processReportProbe]);
        expect(report.cwd).toBe(cwd);
        // Without environmentIsolation the backend may add variables; the ones asked for must still arrive.
        if (capabilities.environmentIsolation) expect(withoutWorkingDirectory(report.env, cwd)).toEqual(env);
        else expect(report.env).toMatchObject(env);
        expect(run.exit).toEqual({ code: 0, signal: null });
      },
    },
  ];
}

/** What flows between parent and process: the fd 3 channels, and stdout and stderr, bounded. */
function streamCases(): ConformanceCase[] {
  return [
    {
      title: 'carries frames both ways on fd 3, the protocol channel',
      run: async (harness) => {
        const child = await harness.spawnNode(echoChannelProbe);
        const frames = [Buffer.from('{"hello":"sandbox"}'), Buffer.alloc(1024 * 1024, 'x'), Buffer.from('✓')];
        const sent = Buffer.concat(
          frames.map((frame) => {
            const header = Buffer.alloc(4);
            header.writeUInt32BE(frame.byteLength);
            return Buffer.concat([header, frame]);
          }),
        );
        const echoed = readBytes(child.channel, sent.byteLength);
        child.channel.write(sent);
        expect((await echoed).equals(sent)).toBe(true);
        child.channel.end();
        expect(await exitWithin(child, exitAfterKillMilliseconds)).toEqual({ code: 0, signal: null });
      },
    },
    {
      title: 'opens one channel by default, and as many as extraFds asks for from fd 3 on',
      run: async (harness) => {
        const single = await harness.spawnNode(waitForeverProbe);
        expect(single.channels).toHaveLength(1);
        expect(single.channel).toBe(single.channels[0]);
        single.kill();
        const child = await harness.spawnNode(greetChannelsProbe(3), { extraFds: 3 });
        expect(child.channels).toHaveLength(3);
        expect(child.channel).toBe(child.channels[0]);
        const greetings = await Promise.all(child.channels.map((channel) => readLine(channel)));
        expect(greetings).toEqual(['fd 3', 'fd 4', 'fd 5']);
        child.channels.forEach((channel, index) => {
          channel.write(`ack ${index + 3}\n`);
        });
        const run = await harness.run(async () => child);
        expect(harness.report(run)).toEqual({ replies: ['ack 3', 'ack 4', 'ack 5'] });
      },
    },
    {
      title: 'keeps stdout and stderr bounded while counting every byte',
      run: async (harness) => {
        const small = await harness.runNode("process.stdout.write('hello'); process.stderr.write('oops')");
        expect(small.process.stdout).toMatchObject({ text: 'hello', bytesSeen: 5, isTruncated: false });
        expect(small.process.stderr).toMatchObject({ text: 'oops', bytesSeen: 4, isTruncated: false });

        const flood = await harness.runNode(floodOutputProbe(floodBytes, floodBytes / 2));
        expect(flood.exit).toEqual({ code: 0, signal: null });
        const { stdout, stderr } = flood.process;
        expect(stdout.bytesSeen).toBe(floodBytes);
        expect(stderr.bytesSeen).toBe(floodBytes / 2);
        expect(stdout.isTruncated).toBe(true);
        expect(stderr.isTruncated).toBe(true);
        expect(Buffer.byteLength(stdout.text)).toBeLessThan(floodBytes);
        expect(Buffer.byteLength(stderr.text)).toBeLessThan(floodBytes / 2);
        expect(stdout.text).toMatch(/^o+$/);
        expect(stderr.text).toMatch(/^e+$/);
      },
    },
  ];
}

/** How a process ends: its exit as reported, kill(), close(), an aborted signal, wallSeconds. */
function endingCases(): ConformanceCase[] {
  return [
    {
      title: 'reports the exit code, or the signal that ended the process',
      run: async (harness) => {
        const exited = await harness.runNode('process.exit(7)');
        expect(exited.exit).toEqual({ code: 7, signal: null });
        // Killing an exited process does nothing.
        expect(() => exited.process.kill()).not.toThrow();
        const signalled = await harness.runNode(
          "process.kill(process.pid, 'SIGTERM'); setTimeout(() => {}, 10_000)",
        );
        expect(signalled.exit).toMatchObject({ code: null, signal: 'SIGTERM' });
      },
    },
    {
      title: 'kill() ends the process, with SIGKILL unless another signal is given',
      run: async (harness) => {
        const killed = await harness.spawnNode(waitForeverProbe);
        await harness.waitForReady(killed);
        killed.kill();
        expect(await exitWithin(killed, exitAfterKillMilliseconds)).toMatchObject({
          code: null,
          signal: 'SIGKILL',
        });
        const terminated = await harness.spawnNode(waitForeverProbe);
        await harness.waitForReady(terminated);
        terminated.kill('SIGTERM');
        expect(await exitWithin(terminated, exitAfterKillMilliseconds)).toMatchObject({
          code: null,
          signal: 'SIGTERM',
        });
      },
    },
    {
      title: 'close() ends the process, removes the workspace and can be called again',
      run: async (harness) => {
        const marker = harness.marker();
        const workspace = await harness.workspace();
        const child = await harness.spawnNode(waitForeverProbe, { workspace }, [marker]);
        await harness.waitForReady(child);
        expect(await processesWithMarker(marker), 'the running probe is seen from outside').not.toEqual([]);
        await Promise.all([child.close(), child.close()]);
        expect(await processesWithMarker(marker), 'processes left after close()').toEqual([]);
        expect(existsSync(workspace), 'the workspace is removed').toBe(false);
        await child.close();
        expect(await exitWithin(child, 100), 'exited has settled').toBeDefined();

        const finished = await harness.runNode('');
        await finished.process.close();
        await finished.process.close();
      },
    },
    {
      title: 'aborting the spawn signal kills the process',
      run: async (harness) => {
        const controller = new AbortController();
        const child = await harness.spawnNode(waitForeverProbe, { signal: controller.signal });
        await harness.waitForReady(child);
        controller.abort();
        const exit = await exitWithin(child, exitAfterKillMilliseconds);
        expect(exit, 'the process exited after the abort').toBeDefined();
        expect(exit?.signal).not.toBeNull();
      },
    },
    {
      title: 'an already aborted signal leaves nothing running: spawn rejects, or the process ends at once',
      run: async (harness) => {
        const controller = new AbortController();
        controller.abort(new Error('aborted before spawn'));
        let child: Awaited<ReturnType<typeof harness.spawnNode>>;
        try {
          child = await harness.spawnNode(waitForeverProbe, { signal: controller.signal });
        } catch {
          return;
        }
        const exit = await exitWithin(child, exitAfterKillMilliseconds);
        expect(exit, 'the process exited at once').toBeDefined();
        expect(child.stdout.text).not.toContain('ready');
      },
    },
    {
      title: 'limits.wallSeconds ends a process that runs too long',
      run: async (harness) => {
        const child = await harness.spawnNode(waitForeverProbe, { limits: { wallSeconds: 1 } });
        const exit = await exitWithin(child, 1_000 + exitAfterKillMilliseconds);
        expect(exit, 'the process was ended by the wall-clock limit').toBeDefined();
        expect(exit?.signal).not.toBeNull();
        if (exit?.limitExceeded !== undefined) expect(exit.limitExceeded).toBe('wallSeconds');
      },
    },
  ];
}

/** What a backend refuses to spawn: a malformed spec, and any isolation or limit it cannot enforce. */
function refusalCases(context: SuiteContext): ConformanceCase[] {
  const { backendName, capabilities } = context;
  const undeclaredLimits = limitsByCapability.filter(([, capability]) => !capabilities[capability]);
  return [
    {
      title: 'rejects a relative command with a ConfigurationError',
      run: async (harness) => {
        const spec = await harness.spec({ command: 'node', args: ['-e', ''] });
        await expectRejection(harness.backend.spawn(spec), ConfigurationError);
      },
    },
    {
      title: 'rejects an unknown limit with a ConfigurationError',
      run: async (harness) => {
        const limits = { wallSeconds: 10, memoryMegabytes: 64 } as SandboxLimits;
        const spec = await harness.spec({ args: ['-e', ''], limits });
        await expectRejection(harness.backend.spawn(spec), ConfigurationError);
      },
    },
    {
      title: 'rejects a workspace that does not exist with a ConfigurationError',
      run: async (harness) => {
        const workspace = join(await harness.outsideDirectory(), 'missing');
        const spec = await harness.spec({ args: ['-e', ''], workspace });
        await expectRejection(harness.backend.spawn(spec), ConfigurationError);
        expect(existsSync(workspace), 'spawn did not create the workspace').toBe(false);
      },
    },
    {
      title: "rejects subprocesses: 'deny' with a SandboxUnavailableError when it cannot deny them",
      notApplicable: capabilities.subprocessDenial
        ? `'${backendName}' declares subprocessDenial; the escape suite tests it`
        : undefined,
      run: async (harness) => {
        const spec = await harness.spec({ args: ['-e', ''], subprocesses: 'deny' });
        await expectRejection(harness.backend.spawn(spec), SandboxUnavailableError);
      },
    },
    {
      title: "rejects network: 'none' with a SandboxUnavailableError when it cannot isolate the network",
      notApplicable: capabilities.networkIsolation
        ? `'${backendName}' declares networkIsolation; the escape suite tests it`
        : undefined,
      run: async (harness) => {
        const spec = await harness.spec({ args: ['-e', ''], network: 'none' });
        await expectRejection(harness.backend.spawn(spec), SandboxUnavailableError, "network: 'none'");
        // 'none' is the default, so leaving network out must be refused too.
        const { network: _none, ...defaulted } = spec;
        await expectRejection(harness.backend.spawn(defaulted), SandboxUnavailableError, 'network left out');
      },
    },
    {
      title: 'rejects every limit it does not declare with a SandboxUnavailableError',
      notApplicable:
        undeclaredLimits.length === 0
          ? `'${backendName}' declares every limit; the escape suite hits them`
          : undefined,
      run: async (harness) => {
        for (const [limit, , value] of undeclaredLimits) {
          const spec = await harness.spec({ args: ['-e', ''], limits: { [limit]: value } });
          await expectRejection(harness.backend.spawn(spec), SandboxUnavailableError, limit);
        }
      },
    },
  ];
}

/** Fails unless `spawning` rejects with an error of `expected` (checked with its `isInstance`). */
async function expectRejection(
  spawning: Promise<{ close(): Promise<void> }>,
  expected: typeof ConfigurationError | typeof SandboxUnavailableError,
  what?: string,
): Promise<void> {
  let outcome: unknown;
  try {
    const child = await spawning;
    await child.close();
    outcome = 'a started process';
  } catch (error) {
    if (expected.isInstance(error)) return;
    outcome = error;
  }
  expect.fail(`${what === undefined ? '' : `${what}: `}expected a ${expected.name}, got ${String(outcome)}`);
}
