import { createHash } from 'node:crypto';
import { canonicalJson } from '../../canonical-json.js';
import type { JsonObject } from '../../json.js';
import type { ModelMessage } from '../../model.js';
import { encodeSessionMessage } from '../../session-message-codec.js';
import type {
  OpenedSessionV1,
  SessionLimits,
  SessionStoreV1,
  SessionTurnOutcome,
  SessionWrite,
} from '../../session-store.js';

/** What every case of the session store conformance suite works with. */
export interface ConformanceStores {
  /** Makes a store for one test, with `limits` over the defaults; the suite closes it after the test. */
  readonly make: (limits?: Partial<SessionLimits>) => Promise<SessionStoreV1>;
  /** Opens a second store over the storage of `store`; only when {@link ConformanceStores.hasSibling}. */
  readonly sibling: (store: SessionStoreV1) => Promise<SessionStoreV1>;
  /** Whether the store under test can open a second store over the same storage. */
  readonly hasSibling: boolean;
  /** What the name of a case that needs a sibling ends with when it is skipped: why. */
  readonly siblingSkip: string;
  /** Opens session `id` of `store` as `who`, waiting up to `lockTimeoutMs`. */
  readonly openSession: (
    store: SessionStoreV1,
    id: string,
    who?: string,
    lockTimeoutMs?: number,
  ) => Promise<OpenedSessionV1>;
}

/** The actor the cases open sessions as, unless a case says otherwise. */
export const actor = 'actor-1';
/** An actor that owns none of {@link actor}'s sessions. */
export const otherActor = 'actor-2';

/** A user message with `text`, encoded as Ghost hands messages to stores. */
export function message(text: string): string {
  const user: ModelMessage = { role: 'user', content: text };
  return encodeSessionMessage(user);
}

/** A write of `messages` (and `extra`) under `operationId`, with the digest Ghost would give it. */
export function write(
  operationId: string,
  messages: readonly string[],
  extra: {
    state?: JsonObject;
    outcome?: SessionTurnOutcome;
    replaceFrom?: NonNullable<SessionWrite['replaceFrom']>;
    pause?: string | null;
  } = {},
): SessionWrite {
  const content = { messages, ...extra };
  return {
    operationId,
    digest: createHash('sha256').update(canonicalJson(content)).digest('hex'),
    ...content,
  };
}

/** A paused run as Ghost might write it: JSON text the store keeps without reading. */
export function pausedRun(runId: string, note = 'waiting for approval'): string {
  return JSON.stringify({
    runId,
    note,
    calls: [{ id: `${runId}-call`, tool: 'refund', input: { amount: 42 } }],
  });
}

/** The message text of the newest `limit` records of `session`, oldest first. */
export async function texts(session: OpenedSessionV1, limit = 1000): Promise<string[]> {
  return (await session.history({ limit })).map((record) => record.message);
}
