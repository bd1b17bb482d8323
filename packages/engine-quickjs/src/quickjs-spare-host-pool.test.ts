import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OpenedCodeModeSession, openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { createRuntime, type Runtime } from '@ghost/core';
import type { SandboxLimits, SandboxProcess } from '@ghost/core/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';
import { watchedBwrapBackend } from './test-support/watched-bwrap-backend.js';

// Spare engine hosts pooled per runtime, with real bubblewrap and real QuickJS hosts. The backend
// records every host it starts: its limits, whether it is still running, whether it said ready,
// and which programs the parent sent it (each program's source names its session), so a test can
// tell which host served which session.

interface RecordedHost {
  readonly process: SandboxProcess;
  readonly limits: SandboxLimits | undefined;
  readonly programs: string[];
  isRunning: boolean;
  isReady: boolean;
}

function recordingBackend() {
  const hosts: RecordedHost[] = [];
  const backend = watchedBwrapBackend((spec, started) => {
    const host: RecordedHost = {
      process: started,
      limits: spec.limits,
      programs: [],
      isRunning: true,
      isReady: false,
    };
    hosts.push(host);
    void started.exited.then(() => {
      host.isRunning = false;
    });
    return {
      written(chunk) {
        // A program frame may carry its source more than once (as sent, and as prepared).
        for (const marker of new Set(chunk.match(/program of session \d+/g))) host.programs.push(marker);
      },
      received(chunk) {
        if (chunk.includes('"type":"ready"')) host.isReady = true;
      },
    };
  });
  return { backend, hosts };
}

const running = (hosts: readonly RecordedHost[]) => hosts.filter((host) => host.isRunning);

/** Waits until `condition` holds, checking every 50 ms; fails after 20 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** Waits until the recorded hosts have not changed (started, ended, got ready) for a second. */
async function settled(hosts: readonly RecordedHost[]): Promise<void> {
  const state = () => hosts.map((host) => `${host.isRunning}${host.isReady}`).join();
  let last = state();
  let stableFor = 0;
  while (stableFor < 1000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = state();
    stableFor = now === last ? stableFor + 50 : 0;
    last = now;
  }
}

// Each case starts several sandboxed hosts, which takes far longer on a loaded machine.
describe('spare hosts pooled per runtime (bubblewrap, QuickJS)', { timeout: 90_000 }, () => {
  let workspaceRoot: string;
  let runtime: Runtime;
  let opened: OpenedCodeModeSession[];

  beforeEach(async () => {
    workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-spare-pool-'));
    runtime = createRuntime({ workspaceRoot });
    opened = [];
  });

  afterEach(async () => {
    await Promise.allSettled(opened.map((each) => each.close()));
    await runtime.close();
    await rm(workspaceRoot, { recursive: true, force: true });
  });

  async function open(count: number, options: Parameters<typeof openCodeModeSession>[0]) {
    const sessions = await Promise.all(
      Array.from({ length: count }, () => openCodeModeSession({ ...options, runtime })),
    );
    opened.push(...sessions);
    return sessions;
  }

  it('six sessions opened at once hold two spares, and each program still gets a fresh host of its own', async () => {
    const { backend, hosts } = recordingBackend();
    const sessions = await open(6, { engine: quickjsEngine, sandbox: backend, spareHosts: 2 });
    await until(() => hosts.filter((host) => host.isReady).length >= 2, 'two spares got ready');
    await settled(hosts); // and no more start
    expect(running(hosts).length).toBe(2);

    // Two programs in each session, the sessions side by side.
    const values = await Promise.all(
      sessions.map(async ({ session }, index) => {
        const first = await session.execute(`'program of session ${index}'`);
        const second = await session.execute(`'program of session ${index}'`);
        return [first.value, second.value];
      }),
    );
    expect(values).toEqual(sessions.map((_, index) => Array(2).fill(`program of session ${index}`)));

    const served = hosts.filter((host) => host.programs.length > 0);
    expect(served.length).toBe(12);
    for (const host of served) expect(host.programs.length).toBe(1);
    // No host served two sessions: each pid appears once, with one session's program.
    expect(new Set(served.map((host) => host.process.pid)).size).toBe(12);

    await settled(hosts);
    expect(running(hosts).length).toBeLessThanOrEqual(2);
  });

  it('one session keeps one spare however many programs it runs, since it runs one at a time', async () => {
    const { backend, hosts } = recordingBackend();
    const sessions = await open(1, { engine: quickjsEngine, sandbox: backend, spareHosts: 3 });
    const { session } = sessions[0] as OpenedCodeModeSession;
    for (let index = 0; index < 3; index += 1) await session.execute(`'program of session 0'`);
    await until(() => hosts.some((host) => host.isReady && host.programs.length === 0), 'a spare got ready');
    await settled(hosts);
    expect(running(hosts).length).toBe(1);
  });

  it('closing the last session ends the pooled spares, and runtime.close() leaves no process and no workspace', async () => {
    const { backend, hosts } = recordingBackend();
    const [first, second] = await open(2, { engine: quickjsEngine, sandbox: backend });
    await until(() => hosts.some((host) => host.isReady), 'a spare got ready');
    await first?.close();
    expect(running(hosts).length).toBeGreaterThan(0); // the other session keeps the pool
    await second?.close();
    expect(running(hosts)).toEqual([]);

    const [third] = await open(1, { engine: quickjsEngine, sandbox: backend });
    await until(() => running(hosts).length > 0, 'a spare started for a new session');
    await runtime.close(); // the session is still open: the runtime's close ends its spare
    expect(running(hosts)).toEqual([]);
    expect(await descendantProcesses()).toEqual([]);
    await third?.close();
    expect(await readdir(workspaceRoot)).toEqual([]);
    await expect(openCodeModeSession({ engine: quickjsEngine, sandbox: backend, runtime })).rejects.toThrow(
      expect.objectContaining({ code: 'RUNTIME_CLOSED' }),
    );
  });

  it('a spare that dies while pooled is replaced and never handed out', async () => {
    const { backend, hosts } = recordingBackend();
    const sessions = await open(1, { engine: quickjsEngine, sandbox: backend });
    const { session } = sessions[0] as OpenedCodeModeSession;
    await until(() => hosts[0]?.isReady === true, 'the spare got ready');
    const dead = hosts[0] as RecordedHost;
    dead.process.kill('SIGKILL');
    await until(() => hosts.length === 2 && !dead.isRunning, 'a replacement spare started');
    const result = await session.execute(`'program of session 0'`);
    expect(result).toMatchObject({ status: 'completed', value: 'program of session 0' });
    expect(dead.programs).toEqual([]);
    expect(hosts[1]?.programs).toEqual(['program of session 0']);
  });

  it('sessions with different limits get different pools, and each program runs under its own limits', async () => {
    const { backend, hosts } = recordingBackend();
    const [small] = await open(1, { engine: quickjsEngine, sandbox: backend, limits: { cpuSeconds: 2 } });
    const [large] = await open(1, { engine: quickjsEngine, sandbox: backend, limits: { cpuSeconds: 7 } });
    await until(() => hosts.filter((host) => host.isReady).length >= 2, 'two spares got ready');
    await settled(hosts);
    expect(running(hosts).length).toBe(2); // one spare per pool, not one shared
    await small?.session.execute(`'program of session 0'`);
    await large?.session.execute(`'program of session 1'`);
    const hostOf = (marker: string) => hosts.find((host) => host.programs.includes(marker));
    expect(hostOf('program of session 0')?.limits?.cpuSeconds).toBe(2 + 3);
    expect(hostOf('program of session 1')?.limits?.cpuSeconds).toBe(7 + 3);
  });

  it('sessions on different sandboxes never share a spare', async () => {
    const first = recordingBackend();
    const second = recordingBackend();
    const [one] = await open(1, { engine: quickjsEngine, sandbox: first.backend });
    await settled(first.hosts);
    const [two] = await open(1, { engine: quickjsEngine, sandbox: second.backend });
    await settled(second.hosts);
    await one?.session.execute(`'program of session 0'`);
    await two?.session.execute(`'program of session 1'`);
    expect(first.hosts.flatMap((host) => host.programs)).toEqual(['program of session 0']);
    expect(second.hosts.flatMap((host) => host.programs)).toEqual(['program of session 1']);
  });
});
