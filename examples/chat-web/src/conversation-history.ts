import type { ModelMessage, PendingApproval, Runtime } from '@ghost/core';

/** One thing the page shows of a stored conversation. */
export type HistoryItem =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string }
  | { readonly kind: 'program'; readonly source: string }
  | { readonly kind: 'tool'; readonly name: string; readonly isError: boolean };

/** What `GET /api/history` returns: the conversation, and the calls waiting for a person's answer. */
export interface Conversation {
  readonly items: readonly HistoryItem[];
  readonly pendingApprovals: readonly PendingApproval[];
}

/** Code mode's own tools: `exec` shows as its program, `wait` and `stop` not at all. */
const controlTools = new Set(['exec', 'wait', 'stop']);

/** The most messages a page shows of one conversation. */
const historyLimit = 500;

function textOf(message: ModelMessage & { role: 'user' }): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

function sourceOf(argumentsText: string): string {
  try {
    const { source } = JSON.parse(argumentsText) as { source?: unknown };
    return typeof source === 'string' ? source : argumentsText;
  } catch {
    return argumentsText;
  }
}

/**
 * The items the page shows for stored messages, in order; a direct tool call shows with its
 * result. Calls in `waiting` are left out: the page shows those with their approval buttons.
 */
export function historyItemsOf(
  messages: readonly ModelMessage[],
  waiting: ReadonlySet<string> = new Set(),
): HistoryItem[] {
  const failedCalls = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.isError) failedCalls.add(message.toolCallId);
  }
  const items: HistoryItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') items.push({ kind: 'user', text: textOf(message) });
    if (message.role !== 'assistant') continue;
    if (message.content !== '') items.push({ kind: 'assistant', text: message.content });
    for (const call of message.toolCalls ?? []) {
      if (call.name === 'exec') items.push({ kind: 'program', source: sourceOf(call.arguments) });
      else if (!controlTools.has(call.name) && !waiting.has(call.id)) {
        items.push({ kind: 'tool', name: call.name, isError: failedCalls.has(call.id) });
      }
    }
  }
  return items;
}

/**
 * The stored conversation of a thread, as the page shows it, then the turn of a run paused for a
 * person (its question and what the model did before the calls that wait) and the approvals it
 * waits for; empty for a thread never written. `readSession` waits while a run holds the thread (here up
 * to 10 seconds) and writes nothing.
 */
export async function readConversation(
  runtime: Runtime,
  session: { readonly id: string; readonly actor: string },
): Promise<Conversation> {
  const { history, pendingApprovals, pausedTurn } = await runtime.readSession({
    ...session,
    limit: historyLimit,
    lockTimeoutMs: 10_000,
  });
  const waiting = new Set(pendingApprovals.map((pending) => pending.toolCallId));
  const messages = [...history.map((entry) => entry.message), ...pausedTurn];
  return { items: historyItemsOf(messages, waiting), pendingApprovals };
}
