import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent } from '@ghost/core';
import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
import { ScriptedModel } from '@ghost/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { directorySessionStore } from './directory-session-store.js';

const roots: string[] = [];
async function freshRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ghost-directory-store-'));
  roots.push(root);
  return root;
}
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

const storeRoots = new WeakMap<object, string>();

describeSessionStoreConformance(
  async ({ limits }) => {
    const root = await freshRoot();
    const store = directorySessionStore({ root, ...(limits === undefined ? {} : { limits }) });
    storeRoots.set(store, root);
    return store;
  },
  {
    name: 'directory (example)',
    // A second store over the same directory, as a second process would open it.
    openSibling: async (store) => directorySessionStore({ root: storeRoots.get(store) ?? '' }),
  },
);

describe('directorySessionStore with an agent', () => {
  it('keeps a conversation across two runtimes, as across a restart, and leaves no lock file', async () => {
    const root = await freshRoot();
    const session = { id: 'chat-1', actor: 'user-1' };
    const model = new ScriptedModel([{ text: 'Hello, Ada.' }, { text: 'You are Ada.' }]);
    const agent = defineAgent({ name: 'greeter', model });

    const first = directorySessionStore({ root });
    await agent.ask('I am Ada.', { runtime: createRuntime({ sessionStore: first }), session });
    await first.close();

    const second = directorySessionStore({ root });
    const run = await agent.ask('Who am I?', { runtime: createRuntime({ sessionStore: second }), session });
    await second.close();
    expect(run.outcome).toBe('completed');
    expect(model.calls[1]?.messages).toEqual([
      { role: 'user', content: 'I am Ada.' },
      { role: 'assistant', content: 'Hello, Ada.' },
      { role: 'user', content: 'Who am I?' },
    ]);
    expect((await readdir(root)).filter((file) => !file.endsWith('.json'))).toEqual([]);
  });
});
