import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent, type ModelMessage } from '@ghost/core';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteSessionStore } from './sqlite-session-store.js';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-sqlite-subagents-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const userTexts = (messages: readonly ModelMessage[]) =>
  messages.flatMap((message) =>
    message.role === 'user' && typeof message.content === 'string' ? [message.content] : [],
  );

const spawnDiary = (task: string) => ({
  toolCalls: [{ name: 'spawn_subagent', input: { kind: 'notes', task_name: 'diary', task, mode: 'sync' } }],
});

describe('a persisted subagent in a SQLite session', () => {
  it('keeps its conversation across a restart: a new runtime on the same file continues it', async () => {
    const path = join(directory, 'sessions.db');
    const session = { id: 'chat-1', actor: 'user-1' };
    const notesModel = new MockModel({
      stream: (request) => [
        { type: 'text-delta', text: `noted ${userTexts(request.messages).length}` },
        { type: 'finish', reason: 'stop' },
      ],
    });
    const lead = (steps: ConstructorParameters<typeof ScriptedModel>[0]) =>
      defineAgent({
        name: 'lead',
        model: new ScriptedModel(steps),
        subagents: [
          {
            agent: defineAgent({ name: 'notes', model: notesModel }),
            description: 'Keeps notes.',
            persist: true,
          },
        ],
      });

    const before = createRuntime({ sessionStore: sqliteSessionStore({ path }) });
    const first = await lead([spawnDiary('remember A'), { text: 'one' }]).ask('first', {
      runtime: before,
      session,
    });
    expect(first.outcome).toBe('completed');
    await before.close();

    // A process restarted: a new store and runtime on the same file.
    const store = sqliteSessionStore({ path });
    const after = createRuntime({ sessionStore: store });
    const second = await lead([spawnDiary('remember B'), { text: 'two' }]).ask('second', {
      runtime: after,
      session,
    });
    expect(second.outcome).toBe('completed');
    expect(userTexts(notesModel.calls[1]?.messages ?? [])).toEqual(['remember A', 'remember B']);

    // The subagent's conversation is a session of its own, under the parent's id, with the same actor.
    const opened = await store.open({ id: 'chat-1/subagents/diary', actor: 'user-1', lockTimeoutMs: 1_000 });
    try {
      const records = await opened.history({ limit: 10 });
      const messages = records.map((record) => JSON.parse(record.message) as ModelMessage);
      expect(userTexts(messages)).toEqual(['remember A', 'remember B']);
    } finally {
      await opened.release();
    }
    await after.close();
  });
});
