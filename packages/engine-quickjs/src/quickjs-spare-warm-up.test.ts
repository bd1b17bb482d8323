import { type OpenedCodeModeSession, openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';
import { watchedBwrapBackend } from './test-support/watched-bwrap-backend.js';

// A spare host warms up (tool calls on its own loopback) before it says hello, unless a program
// is waiting for it: then the parent sends it `hurry`. Real bubblewrap and real QuickJS hosts; the
// backend records the type of every frame the parent writes to each host, and whether the host
// has said hello.

interface RecordedHost {
  readonly sent: string[];
  saidHello: boolean;
}

function recordingBackend() {
  const hosts: RecordedHost[] = [];
  const backend = watchedBwrapBackend(() => {
    const host: RecordedHost = { sent: [], saidHello: false };
    hosts.push(host);
    return {
      written(chunk) {
        const type = /"type":"(\w+)"/.exec(chunk)?.[1];
        if (type !== undefined) host.sent.push(type);
      },
      received(chunk) {
        if (chunk.includes('"type":"hello"')) host.saidHello = true;
      },
    };
  });
  return { backend, hosts };
}

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ n: Type.Number() }),
  execute: (input) => input,
});

const program = 'let sum = 0;\nfor (let n = 1; n <= 3; n += 1) sum += (await tools.echo({ n })).n;\nsum';

// Each case starts sandboxed hosts, which takes far longer on a loaded machine.
describe('a spare host warms up until a program waits for it (bubblewrap, QuickJS)', {
  timeout: 60_000,
}, () => {
  let opened: OpenedCodeModeSession | undefined;

  afterEach(async () => {
    await opened?.close();
    opened = undefined;
    expect(await descendantProcesses()).toEqual([]);
  });

  it('is sent hurry before its hello when a program takes it still warming up, and runs the program', async () => {
    const { backend, hosts } = recordingBackend();
    opened = await openCodeModeSession({ engine: quickjsEngine, sandbox: backend, tools: [echo] });
    // The open launched the spare a moment ago: it has not said hello.
    const result = await opened.session.execute(program);

    expect(result).toMatchObject({ status: 'completed', value: 6 });
    const first = hosts[0];
    expect(first?.sent.slice(0, 3)).toEqual(['hurry', 'setup', 'execute']);
  });

  it('is not hurried once it has said hello: the program finds it warmed up', async () => {
    const { backend, hosts } = recordingBackend();
    opened = await openCodeModeSession({ engine: quickjsEngine, sandbox: backend, tools: [echo] });
    for (let waited = 0; !hosts[0]?.saidHello; waited += 50) {
      if (waited > 30_000) throw new Error('the spare never said hello');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await opened.session.execute(program);

    expect(result).toMatchObject({ status: 'completed', value: 6 });
    expect(hosts[0]?.sent).not.toContain('hurry');
    expect(hosts[0]?.sent.slice(0, 2)).toEqual(['setup', 'execute']);
  });
});
