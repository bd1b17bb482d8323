import { readFile } from 'node:fs/promises';
import { openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses, describeEngineConformance } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import { defineSandboxBackend, type SandboxSpawnSpec } from '@ghost/core/sandbox';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  isolatedVmHereMajor,
  isolatedVmHereProblem,
  needingIsolatedVm,
  v8EngineHere,
} from './test-support/isolated-vm-here.js';

describe.skipIf(isolatedVmHereProblem !== undefined)(
  needingIsolatedVm('the V8 engine in the native sandbox'),
  () => {
    // The engine layer and the OS layer together: every conformance case in the bubblewrap sandbox,
    // with isolated-vm's addon loaded from a read-only runtime path under seccomp.
    describeEngineConformance({ engine: v8EngineHere, sandbox: bwrapSandbox });

    describe('the V8 host in the native sandbox', () => {
      it('runs a program with its threads and resident memory well inside the host’s OS limits', async () => {
        let release: () => void = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let reached: () => void = () => {};
        const isWaiting = new Promise<void>((resolve) => {
          reached = resolve;
        });
        const hold = defineTool({
          name: 'hold',
          description: 'Waits for the test.',
          input: Type.Object({}),
          execute: async () => {
            reached();
            await released;
            return 'released';
          },
        });
        const opened = await openCodeModeSession({
          engine: v8EngineHere,
          sandbox: bwrapSandbox,
          tools: [hold],
          prewarm: false,
        });
        try {
          const running = opened.session.execute(
            'const data = Array.from({ length: 1e5 }, (_, i) => ({ i })); await tools.hold({}); data.length',
          );
          await isWaiting;
          const hosts = (await descendantProcesses()).filter((each) => each.command.includes('engine-v8'));
          expect(hosts.length).toBeGreaterThan(0);
          for (const host of hosts) {
            const status = await readFile(`/proc/${host.pid}/status`, 'utf8');
            const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]);
            const residentMiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
            // The pids cgroup counts threads: 64 per host. The memory cgroup: memoryBytes + 160 MiB.
            expect(threads).toBeLessThan(32);
            expect(residentMiB).toBeLessThan(160);
          }
          release();
          expect((await running).value).toBe(100_000);
        } finally {
          release();
          await opened.close();
        }
      });

      it('gets the same OS limits as any host, and runs V8 within them (threads, memory)', async () => {
        const specs: SandboxSpawnSpec[] = [];
        const recording = defineSandboxBackend({
          ...bwrapSandbox,
          spawn: (spec) => {
            specs.push(spec);
            return bwrapSandbox.spawn(spec);
          },
        });
        const opened = await openCodeModeSession({
          engine: v8EngineHere,
          sandbox: recording,
          limits: { memoryBytes: 32 * 1024 * 1024, cpuSeconds: 2 },
        });
        try {
          // A program that makes V8 work: garbage, a JIT-hot loop, a big string; all in the limits.
          const result = await opened.session.execute(
            'let total = 0; for (let i = 0; i < 3e6; i++) total += (i % 7) * 2;\nconst parts = []; for (let i = 0; i < 2e5; i++) parts.push({ i, s: String(i) });\n[total, parts.length, "x".repeat(1e6).length]',
          );
          expect(result).toEqual({ status: 'completed', output: '', value: [17999988, 200000, 1000000] });
        } finally {
          await opened.close();
        }
        expect(specs.length).toBeGreaterThan(0);
        for (const spec of specs) {
          expect(spec).toMatchObject({ env: {}, network: 'none', subprocesses: 'deny' });
          expect(spec.limits).toMatchObject({ memoryBytes: (32 + 160) * 1024 * 1024, processes: 64 });
          expect(spec.runtimePaths.some((path) => /isolated-vm/.test(path))).toBe(true);
        }
      });
    });

    describe('V8 failures in the native sandbox', () => {
      // isolated-vm 7 refuses this allocation as over the heap limit instead (v8-engine.test.ts).
      const title =
        isolatedVmHereMajor < 7
          ? 'a catastrophic V8 error aborts only the sandboxed host; the next program runs in a fresh one'
          : 'an allocation that aborts a host on isolated-vm 5 ends only the program on isolated-vm 7; the next program runs';
      const catastropheOutcome =
        isolatedVmHereMajor < 7
          ? /host process ended unexpectedly \(signal=SIGABRT/
          : /used more than its memory limit of 33554432 bytes \(limits\.memoryBytes\)/;
      it(title, async () => {
        const opened = await openCodeModeSession({
          engine: v8EngineHere,
          sandbox: bwrapSandbox,
          limits: { memoryBytes: 32 * 1024 * 1024 },
        });
        try {
          const crashed = await opened.session.execute('new Array(2 ** 27).fill(1).length');
          expect(crashed.status).toBe('error');
          expect(crashed.error).toMatch(catastropheOutcome);
          expect((await opened.session.execute('"alive"')).value).toBe('alive');
        } finally {
          await opened.close();
        }
      });
    });
  },
);
