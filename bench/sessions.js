// Memory with many concurrent code-mode sessions on one runtime: the parent's resident memory and
// heap, and how many engine host processes run and how much resident memory they hold together.
// Run alone with `node bench/sessions.js [sessions ... idle:sessions]` (default 1 10 100 idle:200);
// `pnpm bench` runs it through run.js. Figures and the design: docs/decisions/2026-12-05-spare-host-pool.md.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCodeModeSession } from '@ghost/code-mode';
import { createRuntime } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { delay, noop } from './code-mode.js';

const mebibyte = 1024 * 1024;

/** Every process below this one: pid, parent pid, command name and resident memory in bytes. */
async function descendants() {
  const processes = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      const parent = /\nPPid:\s+(\d+)/.exec(status);
      const name = /^Name:\s+(.*)$/m.exec(status);
      const resident = /VmRSS:\s+(\d+) kB/.exec(status);
      processes.push({
        pid: Number(entry),
        parent: parent ? Number(parent[1]) : 0,
        name: name ? name[1] : '',
        residentBytes: resident ? Number(resident[1]) * 1024 : 0,
      });
    } catch {
      // The process ended while it was read.
    }
  }
  const below = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const each of processes) {
      if (!below.has(each.pid) && below.has(each.parent)) {
        below.add(each.pid);
        grew = true;
      }
    }
  }
  return processes.filter((each) => each.pid !== process.pid && below.has(each.pid));
}

/**
 * Waits at least fifteen seconds (a loaded machine may take that long to spawn the first sandbox),
 * and until the set of descendant processes has not changed for five seconds (spares started),
 * and returns the most host processes, and the most resident memory they held, seen meanwhile.
 */
async function settle() {
  let last = '';
  const startedAt = performance.now();
  let stableSince = startedAt;
  const peak = { hosts: 0, residentBytes: 0 };
  for (;;) {
    const processes = await descendants();
    peak.hosts = Math.max(peak.hosts, processes.filter((each) => each.name === 'node').length);
    peak.residentBytes = Math.max(
      peak.residentBytes,
      processes.reduce((sum, each) => sum + each.residentBytes, 0),
    );
    const now = processes
      .map((each) => each.pid)
      .sort()
      .join(',');
    if (now !== last) {
      last = now;
      stableSince = performance.now();
    } else if (performance.now() - stableSince > 5000 && performance.now() - startedAt > 15_000) {
      return peak;
    }
    await delay(250);
  }
}

async function snapshot(label, peak) {
  globalThis.gc?.();
  const processes = await descendants();
  const hosts = processes.filter((each) => each.name === 'node');
  const memory = process.memoryUsage();
  return {
    label,
    parentResidentMiB: memory.rss / mebibyte,
    parentHeapMiB: memory.heapUsed / mebibyte,
    hostProcesses: hosts.length,
    processes: processes.length,
    processResidentMiB: processes.reduce((sum, each) => sum + each.residentBytes, 0) / mebibyte,
    peakHostProcesses: peak.hosts,
    peakResidentMiB: peak.residentBytes / mebibyte,
  };
}

/**
 * Opens `count` sessions at once on one runtime, optionally runs one program in each (all at
 * once), lets the spares settle and measures; then closes everything.
 */
async function measureSessions(count, { runPrograms, sandbox, hasOwnRuntimes = false }) {
  const workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-bench-sessions-'));
  const runtime = createRuntime({ workspaceRoot });
  const opened = [];
  try {
    const openings = Array.from({ length: count }, () =>
      // A runtime of its own per session is the behaviour before spares were pooled per runtime:
      // one spare host per session.
      openCodeModeSession({
        engine: quickjsEngine,
        sandbox,
        tools: [noop],
        ...(hasOwnRuntimes ? {} : { runtime }),
      }),
    );
    for (const each of await Promise.all(openings)) opened.push(each);
    if (runPrograms) {
      // Ten programs at a time: a hundred hosts starting at once on two loaded cores can take
      // longer than a host's start timeout. The sessions stay open side by side throughout.
      for (let index = 0; index < opened.length; index += 10) {
        const results = await Promise.all(
          opened.slice(index, index + 10).map((each) => each.session.execute('await tools.noop({}); 1')),
        );
        const failed = results.find((result) => result.status !== 'completed');
        if (failed) throw new Error(`bench program failed: ${failed.error}`);
      }
    }
    const peak = await settle();
    return await snapshot(
      `${count} ${runPrograms ? 'sessions, one program each' : 'idle sessions'}${hasOwnRuntimes ? ', own runtimes' : ''}`,
      peak,
    );
  } finally {
    // Ten at a time: closing a hundred sandboxes at once can outlast limits.cleanupSeconds on a
    // loaded machine. A close that reports that is noted, not fatal: this bench measures memory.
    for (let index = 0; index < opened.length; index += 10) {
      const closings = await Promise.allSettled(opened.slice(index, index + 10).map((each) => each.close()));
      for (const closing of closings) {
        if (closing.status === 'rejected') console.error(`close: ${closing.reason.message}`);
      }
    }
    await runtime.close?.();
    await rm(workspaceRoot, { recursive: true, force: true });
  }
}

/** Memory figures for 1, 10 and 100 sessions that each ran a program, and 200 idle sessions. */
export async function sessionFigures({ counts = [1, 10, 100], idle = 200, sandbox = bwrapSandbox } = {}) {
  const rows = [];
  for (const count of counts) rows.push(await measureSessions(count, { runPrograms: true, sandbox }));
  if (idle > 0) rows.push(await measureSessions(idle, { runPrograms: false, sandbox }));
  return rows;
}

const header =
  'sessions                          parent RSS  parent heap  hosts  processes  their RSS  (peak: hosts, their RSS)';

function formatRow(row) {
  return `${row.label.padEnd(34)}${row.parentResidentMiB.toFixed(0).padStart(7)} MiB${row.parentHeapMiB.toFixed(0).padStart(9)} MiB${String(row.hostProcesses).padStart(7)}${String(row.processes).padStart(11)}${row.processResidentMiB.toFixed(0).padStart(8)} MiB  (${row.peakHostProcesses}, ${row.peakResidentMiB.toFixed(0)} MiB)`;
}

/** Prints the figures of {@link sessionFigures} as a table. */
export function printSessionFigures(rows) {
  console.log(header);
  for (const row of rows) console.log(formatRow(row));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Printed row by row: the larger cases take minutes on a loaded machine. Arguments: counts of
  // sessions that each run a program, and `idle:<count>` for sessions that run nothing.
  // GHOST_BENCH_OWN_RUNTIMES=1 gives each session a runtime of its own (a spare per session).
  const cases = process.argv.slice(2);
  const hasOwnRuntimes = process.env.GHOST_BENCH_OWN_RUNTIMES === '1';
  console.log(header);
  for (const each of cases.length > 0 ? cases : ['1', '10', '100', 'idle:200']) {
    const isIdle = each.startsWith('idle:');
    const count = Number(isIdle ? each.slice('idle:'.length) : each);
    const row = await measureSessions(count, { runPrograms: !isIdle, sandbox: bwrapSandbox, hasOwnRuntimes });
    console.log(formatRow(row));
  }
}
