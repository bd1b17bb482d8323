// One system's figures for bench/peers.js, in a fresh Node started by it: `node peers-child.js
// <system> <figure>`. Each system gets the same tool (`noop`, which returns null) and the same
// programs, written in its own dialect; the figures are printed as one JSON line on stdout.
// Imports are dynamic so the cold-start clock covers loading the system.
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [system, figure] = process.argv.slice(2);
const peersDirectory = process.env.GHOST_BENCH_PEERS_DIR;

/** Imports `name` as installed in the bench-only peers folder (never from the workspace). */
async function importPeer(name) {
  if (!peersDirectory) throw new Error('GHOST_BENCH_PEERS_DIR is not set: run bench/peers.js');
  const resolved = createRequire(join(peersDirectory, 'package.json')).resolve(name);
  return import(pathToFileURL(resolved).href);
}

/** The programs, per dialect: Ghost's completion value, or the body of an async function. */
const programs = {
  one: { ghost: '1', body: 'return 1;' },
  seq100: {
    ghost: 'for (let index = 0; index < 100; index += 1) await tools.noop({}); 1',
    body: 'for (let index = 0; index < 100; index += 1) await CALL({}); return 1;',
  },
  seq1000: {
    ghost: 'for (let index = 0; index < 1000; index += 1) await tools.noop({}); 1',
    body: 'for (let index = 0; index < 1000; index += 1) await CALL({}); return 1;',
  },
  fan64: {
    ghost: '(await Promise.all(Array.from({ length: 64 }, () => tools.noop({})))).length',
    body: 'return (await Promise.all(Array.from({ length: 64 }, () => CALL({})))).length;',
  },
  spin: { ghost: 'while (true) {}', body: 'while (true) {}' },
  bomb: {
    ghost: 'const hoard = []; while (true) hoard.push(new Array(1e6).fill(hoard.length));',
    body: 'const hoard = []; while (true) hoard.push(new Array(1e6).fill(hoard.length));',
  },
};

/**
 * Opens a system: `run(program)` runs one program to its end and resolves to
 * `{ ok, value?, error? }`; `close()` releases everything.
 */
const systems = {
  /** Ghost, QuickJS in bubblewrap (the native sandbox), a fresh host per program, defaults. */
  async 'ghost-quickjs'() {
    const { openCodeModeSession } = await import('@ghost/code-mode');
    const { quickjsEngine } = await import('@ghost/engine-quickjs');
    return openGhost(openCodeModeSession, quickjsEngine);
  },
  /** Ghost, QuickJS in bubblewrap, `placement: 'session'`: one sandboxed host serves the programs. */
  async 'ghost-quickjs-session'() {
    const { openCodeModeSession } = await import('@ghost/code-mode');
    const { quickjsEngine } = await import('@ghost/engine-quickjs');
    return openGhost(openCodeModeSession, quickjsEngine, 'session');
  },
  /**
   * Ghost, QuickJS in a worker thread of this process with no OS sandbox (`sandbox: 'unrestricted'`,
   * `placement: 'thread'`): the design the in-process peers have, for the round trip without the
   * process boundary.
   */
  async 'ghost-quickjs-thread'() {
    const { openCodeModeSession } = await import('@ghost/code-mode');
    const { quickjsEngine } = await import('@ghost/engine-quickjs');
    return openGhost(openCodeModeSession, quickjsEngine, 'thread', 'unrestricted');
  },
  /** Ghost, V8 in bubblewrap, on the isolated-vm scripts/lts-node.mjs installed for this Node.js. */
  async 'ghost-v8'() {
    const { openCodeModeSession } = await import('@ghost/code-mode');
    const from = process.env.GHOST_TEST_ISOLATED_VM_FROM;
    if (!from) throw new Error('GHOST_TEST_ISOLATED_VM_FROM is not set: run under scripts/lts-node.mjs');
    // The engine's own module, pointed at that isolated-vm (its package entry uses the one beside it).
    const engineModule = new URL('../packages/engine-v8/dist/v8-engine.js', import.meta.url);
    const { createV8Engine } = await import(engineModule.href);
    return openGhost(openCodeModeSession, createV8Engine({ resolveFrom: from }));
  },
  /** `@ai-sdk/code-mode`'s experimental_runCodeMode: QuickJS in worker threads, defaults. */
  async 'ai-sdk'() {
    const { experimental_runCodeMode: runCodeMode } = await importPeer('@ai-sdk/code-mode');
    const { tool, jsonSchema } = await importPeer('ai');
    const tools = {
      noop: tool({
        description: 'Does nothing.',
        inputSchema: jsonSchema({ type: 'object', properties: {} }),
        execute: async () => null,
      }),
    };
    return {
      async run(program) {
        try {
          const value = await runCodeMode({ js: program.body.replaceAll('CALL', 'tools.noop'), tools });
          return { ok: true, value };
        } catch (error) {
          return { ok: false, error: describe(error) };
        }
      },
      async close() {},
    };
  },
  /** `@utcp/code-mode`'s callToolChain: isolated-vm isolates in this process, defaults. */
  async utcp() {
    const { CodeModeUtcpClient } = await importPeer('@utcp/code-mode');
    const { CommunicationProtocol, CallTemplateSerializer, Serializer } = await importPeer('@utcp/sdk');
    // An in-process protocol: the tool lives in this process, as Ghost's and the AI SDK's do.
    class InProcessProtocol extends CommunicationProtocol {
      async registerManual(_caller, callTemplate) {
        const noopTool = {
          name: 'noop',
          description: 'Does nothing.',
          inputs: { type: 'object', properties: {} },
          outputs: { type: 'null' },
          tags: [],
          tool_call_template: callTemplate,
        };
        return {
          manualCallTemplate: callTemplate,
          manual: { utcp_version: '1.0.0', manual_version: '1.0.0', tools: [noopTool] },
          success: true,
          errors: [],
        };
      }
      async deregisterManual() {}
      async callTool() {
        return null;
      }
      async *callToolStreaming() {
        yield null;
      }
    }
    class InProcessSerializer extends Serializer {
      toDict(value) {
        return { ...value };
      }
      validateDict(value) {
        return { ...value };
      }
    }
    CallTemplateSerializer.registerCallTemplate('in_process', new InProcessSerializer(), true);
    CommunicationProtocol.communicationProtocols.in_process = new InProcessProtocol();
    const client = await CodeModeUtcpClient.create();
    const registered = await client.registerManual({ name: 'bench', call_template_type: 'in_process' });
    if (!registered.success) throw new Error(`utcp: ${registered.errors.join('; ')}`);
    return {
      async run(program) {
        try {
          const { result, logs } = await client.callToolChain(program.body.replaceAll('CALL', 'bench.noop'));
          // It reports a program's failure (a timeout, say) in its logs, with a null result.
          return { ok: true, value: result, note: logs.at(-1) };
        } catch (error) {
          return { ok: false, error: describe(error) };
        }
      },
      async close() {
        await client.close?.();
      },
    };
  },
};

async function openGhost(openCodeModeSession, engine, placement = 'process', sandbox = 'native') {
  const { defineTool } = await import('@ghost/core');
  // The same tool every system gets, its input in plain JSON Schema as the peers are given it:
  // with typebox (`Type.Object({})`) the application would also load typebox's 373 modules.
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: { type: 'object', properties: {} },
    execute: () => null,
  });
  // Default limits but the counts per session (programs, tool calls), which a bench of many
  // programs exceeds; the peers count neither.
  const opened = await openCodeModeSession({
    engine,
    sandbox,
    placement,
    tools: [noop],
    limits: { programs: 100_000, toolCalls: 100_000 },
    maxToolCalls: 1_000_000,
  });
  return {
    async run(program) {
      const result = await opened.session.execute(program.ghost);
      return result.status === 'completed'
        ? { ok: true, value: result.value }
        : { ok: false, error: `${result.status}: ${result.error}` };
    },
    close: () => opened.close(),
  };
}

function describe(error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const delay = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Runs `program`, failing the bench when it does not return `expected`. */
async function expectValue(opened, program, expected) {
  const outcome = await opened.run(program);
  if (!outcome.ok || outcome.value !== expected) {
    throw new Error(`${system}: expected ${expected}, got ${JSON.stringify(outcome)}`);
  }
}

async function timedRuns(opened, program, expected, { runs, pauseMs }) {
  const samples = [];
  for (let index = 0; index < runs; index += 1) {
    if (pauseMs > 0) await delay(pauseMs);
    const startedAt = performance.now();
    await expectValue(opened, program, expected);
    samples.push(performance.now() - startedAt);
  }
  return samples;
}

/** Programs completed per second with `inFlight` running at once, over `seconds`. */
async function throughput(opens, inFlight, seconds) {
  const deadline = performance.now() + seconds * 1000;
  let completed = 0;
  const lane = async (opened) => {
    while (performance.now() < deadline) {
      await expectValue(opened, programs.one, 1);
      completed += 1;
    }
  };
  const startedAt = performance.now();
  await Promise.all(opens.slice(0, inFlight).map(lane));
  return completed / ((performance.now() - startedAt) / 1000);
}

/** Resident memory of this process and every process under it, in MiB. */
async function treeResidentMiB() {
  const parents = new Map();
  const resident = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      parents.set(entry, /\nPPid:\t(\d+)/.exec(status)?.[1]);
      resident.set(entry, Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
    } catch {}
  }
  const inTree = (pid) => {
    for (let current = pid; current !== undefined; current = parents.get(current)) {
      if (current === String(process.pid)) return true;
    }
    return false;
  };
  let total = 0;
  for (const [pid, kilobytes] of resident) if (inTree(pid)) total += kilobytes;
  return total / 1024;
}

/** A runaway program at the system's defaults: how long until it ends, and how. */
async function runaway(opened, program) {
  const startedAt = performance.now();
  const outcome = await opened.run(program);
  const seconds = (performance.now() - startedAt) / 1000;
  // Afterwards the system must still run a program.
  const after = await opened.run(programs.one);
  return {
    seconds,
    ended: outcome.ok
      ? `completed (${JSON.stringify(outcome.value)})${outcome.note ? `, logging ${String(outcome.note).slice(0, 120)}` : ''}`
      : outcome.error.slice(0, 160),
    recovers: after.ok && after.value === 1,
  };
}

async function main() {
  const open = systems[system];
  if (open === undefined) throw new Error(`unknown system ${system}`);
  if (figure === 'cold') {
    // spawn → first result: the parent's clock stops at this line.
    const opened = await open();
    await expectValue(opened, programs.one, 1);
    process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
    await opened.close();
    return;
  }
  const opened = await open();
  const figures = {};
  try {
    if (figure === 'warm') {
      await expectValue(opened, programs.one, 1);
      // A pause before each program lets a system that starts its next host ahead (Ghost) do so,
      // as it would between a model's turns; the others are given the same pause.
      figures.warm = await timedRuns(opened, programs.one, 1, { runs: 20, pauseMs: 500 });
      figures.seq100 = await timedRuns(opened, programs.seq100, 1, { runs: 10, pauseMs: 500 });
      // A system may refuse a program of 1000 calls (the AI SDK's bridge allows 256 per program).
      figures.seq1000 = await timedRuns(opened, programs.seq1000, 1, { runs: 7, pauseMs: 500 }).catch(
        (error) => describe(error),
      );
      figures.oneForSeq = await timedRuns(opened, programs.one, 1, { runs: 10, pauseMs: 500 });
      figures.fan64 = await timedRuns(opened, programs.fan64, 64, { runs: 10, pauseMs: 500 });
      figures.residentMiB = await treeResidentMiB();
    } else if (figure === 'throughput') {
      const opens = [opened];
      try {
        for (let index = 1; index < 4; index += 1) opens.push(await open());
        await throughput(opens, 1, 1);
        figures.perSecond1 = await throughput(opens, 1, 5);
        figures.perSecond4 = await throughput(opens, 4, 5);
      } finally {
        for (const extra of opens.slice(1)) await extra.close();
      }
    } else if (figure === 'spin') {
      figures.spin = await runaway(opened, programs.spin);
    } else if (figure === 'bomb') {
      figures.bomb = await runaway(opened, programs.bomb);
    } else {
      throw new Error(`unknown figure ${figure}`);
    }
  } finally {
    await opened.close();
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

await main();
