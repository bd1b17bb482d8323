import type { SessionStoreV1 } from '@ghost/core';

/** One thing the page shows of a stored conversation. */
export type HistoryItem =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string }
  | { readonly kind: 'program'; readonly source: string }
  | { readonly kind: 'tool'; readonly name: string; readonly isError: boolean };

/** A stored message as far as the page needs it (the store keeps Ghost's messages as JSON text). */
interface StoredMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string | readonly { readonly type: string; readonly text?: string }[];
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly toolCallId?: string;
  readonly isError?: boolean;
}

/** Code mode's own tools: `exec` shows as its program, `wait` and `stop` not at all. */
const controlTools = new Set(['exec', 'wait', 'stop']);

/** The most messages a page shows of one conversation. */
const historyLimit = 500;

function textOf(content: StoredMessage['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join(' ');
}

function sourceOf(argumentsText: string): string {
  try {
    const { source } = JSON.parse(argumentsText) as { source?: unknown };
    return typeof source === 'string' ? source : argumentsText;
  } catch {
    return argumentsText;
  }
}

/** The items the page shows for stored messages, in order; a direct tool call shows with its result. */
export function historyItemsOf(messages: readonly StoredMessage[]): HistoryItem[] {
  const failedCalls = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.isError && message.toolCallId) failedCalls.add(message.toolCallId);
  }
  const items: HistoryItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') items.push({ kind: 'user', text: textOf(message.content) });
    if (message.role !== 'assistant') continue;
    const text = textOf(message.content);
    if (text !== '') items.push({ kind: 'assistant', text });
    for (const call of message.toolCalls ?? []) {
      if (call.name === 'exec') items.push({ kind: 'program', source: sourceOf(call.arguments) });
      else if (!controlTools.has(call.name)) {
        items.push({ kind: 'tool', name: call.name, isError: failedCalls.has(call.id) });
      }
    }
  }
  return items;
}

/**
 * The stored conversation of a thread, as the page shows it; empty for a thread never written.
 * It opens the session (waiting while a run holds it), reads the newest messages and releases it.
 */
export async function readConversation(
  store: SessionStoreV1,
  session: { readonly id: string; readonly actor: string },
): Promise<HistoryItem[]> {
  const opened = await store.open({ ...session, lockTimeoutMs: 10_000 });
  try {
    if (opened.isNew) return [];
    const records = await opened.history({ limit: historyLimit });
    return historyItemsOf(records.map((record) => JSON.parse(record.message) as StoredMessage));
  } finally {
    await opened.release();
  }
}
