import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { SessionStoreV1 } from '@ghost/core';
import { sqliteSessionStore } from '@ghost/session-sqlite';

/** Where the demo keeps its conversation, and the session it continues. */
export interface DemoConversation {
  readonly path: string;
  readonly store: SessionStoreV1;
  readonly session: { readonly id: string; readonly actor: string };
  /** Messages the conversation held before this run. */
  readonly earlierMessages: number;
}

/**
 * The SQLite file the demo keeps its conversation in: `GHOST_DEMO_CONVERSATION`, else
 * `$XDG_STATE_HOME/ghost/demo-conversation.db` (`~/.local/state/ghost/...`), which outlives the
 * checkout's builds and a reboot.
 */
function demoConversationPath(environment: NodeJS.ProcessEnv): string {
  const chosen = environment.GHOST_DEMO_CONVERSATION?.trim();
  if (chosen) return chosen;
  const stateHome = environment.XDG_STATE_HOME?.trim() || join(homedir(), '.local', 'state');
  return join(stateHome, 'ghost', 'demo-conversation.db');
}

/** Opens the demo's conversation: its store, and how long it already is. */
export async function openDemoConversation(environment: NodeJS.ProcessEnv): Promise<DemoConversation> {
  const path = demoConversationPath(environment);
  const store = sqliteSessionStore({ path });
  // The actor is whoever runs the demo; an application takes it from its sign-in, never the model.
  const session = { id: 'demo', actor: userInfo().username || 'demo-user' };
  try {
    const { sessions } = await store.list({ actor: session.actor });
    const earlierMessages = sessions.find((summary) => summary.id === session.id)?.messageCount ?? 0;
    return { path, store, session, earlierMessages };
  } catch (error) {
    await store.close();
    throw error;
  }
}
