import {
  type AgentSubscriber,
  HttpAgent,
  type Interrupt,
  type ResumeEntry,
  type RunAgentParameters,
} from '@ag-ui/client';
import { ChatLog, type ToolCallRow } from './chat-log.js';

/** What `GET /api/history` returns for each stored message (see the server's conversation-history.ts). */
type HistoryItem =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'program'; source: string }
  | { kind: 'tool'; name: string; isError: boolean };

/** What `GET /api/history` returns for each call a paused run waits for (`runtime.readSession`). */
interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
}

const threadKey = 'ghost-chat-web.threadId';

function byId<Element extends HTMLElement>(id: string): Element {
  return document.getElementById(id) as Element;
}

const log = new ChatLog(byId('log'));
const form = byId<HTMLFormElement>('ask');
const question = byId<HTMLInputElement>('question');
const sendButton = byId<HTMLButtonElement>('send');
const stopButton = byId<HTMLButtonElement>('stop');

/** A random id; `crypto.randomUUID` needs a secure context, which a LAN address over http is not. */
function newId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))]
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join('');
}

/** The conversation this browser continues, kept across reloads. */
function currentThreadId(): string {
  let threadId = localStorage.getItem(threadKey);
  if (threadId === null) {
    threadId = newId();
    localStorage.setItem(threadKey, threadId);
  }
  return threadId;
}

let agent = new HttpAgent({ url: '/api/agent', threadId: currentThreadId() });
let isStopping = false;
/** Approval answers collected until every pending interrupt has one. */
let answers: ResumeEntry[] = [];
/** Tool calls of the model that wait for a person, to mark once answered. */
let waitingRows: ToolCallRow[] = [];

function setRunning(isRunning: boolean): void {
  sendButton.disabled = isRunning || agent.pendingInterrupts.length > 0;
  stopButton.disabled = !isRunning;
}

/** Shows one run's events as they stream: text, the program, its tool calls with timings, approvals. */
function subscriberFor(): AgentSubscriber {
  const texts = new Map<string, HTMLElement>();
  const calls = new Map<string, { row: ToolCallRow; startedAt: number }>();
  return {
    onTextMessageStartEvent: ({ event }) => {
      texts.set(event.messageId, log.addAssistant());
    },
    onTextMessageContentEvent: ({ event }) => {
      texts.get(event.messageId)?.append(event.delta);
    },
    onCustomEvent: ({ event }) => {
      // Code mode's program, as Ghost's `program_start` event carries it.
      if (event.name === 'ghost.program_start') log.addProgram(String(event.value?.source ?? ''));
    },
    onToolCallStartEvent: ({ event }) => {
      calls.set(event.toolCallId, {
        row: log.addToolCall(event.toolCallName),
        startedAt: event.timestamp ?? Date.now(),
      });
    },
    onToolCallResultEvent: ({ event }) => {
      const call = calls.get(event.toolCallId);
      const isError =
        (event.metadata as { ghost?: { isError?: boolean } } | undefined)?.ghost?.isError === true;
      call?.row.update(isError ? 'error' : 'done', (event.timestamp ?? Date.now()) - call.startedAt);
      calls.delete(event.toolCallId);
    },
    onRunFinishedEvent: (finished) => {
      if (finished.outcome === 'cancelled') log.addStatus('The run was cancelled.');
      if (finished.outcome !== 'interrupt') return;
      showWaiting(
        [...calls.values()].map(({ row }) => row),
        finished.interrupts,
      );
      calls.clear();
    },
    onRunErrorEvent: ({ event }) => {
      // Stopping is not a failure, though the client reports its own abort as one.
      if (isStopping) return;
      log.addStatus(`The run failed: ${event.message}${event.code ? ` (${event.code})` : ''}`, true);
    },
    onRunFinalized: () => {
      // Calls still running when the run ended (it was stopped) never finished.
      for (const { row } of calls.values()) row.update('cancelled');
    },
  };
}

/** Marks the calls that wait for a person and asks for each answer. */
function showWaiting(rows: ToolCallRow[], interrupts: readonly Interrupt[]): void {
  waitingRows = rows;
  for (const row of waitingRows) row.update('waiting for approval');
  for (const interrupt of interrupts) {
    const ghost = (interrupt.metadata as { ghost?: { input?: unknown } } | undefined)?.ghost;
    const text = `${interrupt.message ?? 'Allow the call?'} ${JSON.stringify(ghost?.input ?? {})}`;
    log.addApproval(text, (isApproved) => answer(interrupt.id, isApproved));
  }
}

/**
 * A call a paused run waits for, as the interrupt the server's run ended with: its id is the
 * approval id the resume answers (`@ghost/ag-ui` maps them so).
 */
function interruptOf(pending: PendingApproval): Interrupt {
  return {
    id: pending.approvalId,
    reason: 'tool_approval',
    message: `Allow the call to ${pending.toolName}?`,
    toolCallId: pending.toolCallId,
    metadata: { ghost: { toolName: pending.toolName, input: pending.input } },
  };
}

async function run(parameters: RunAgentParameters): Promise<void> {
  isStopping = false;
  setRunning(true);
  try {
    await agent.runAgent(parameters, subscriberFor());
    if (isStopping) log.addStatus('Stopped: the run was cancelled.');
  } catch (error) {
    if (isStopping) log.addStatus('Stopped: the run was cancelled.');
    else log.addStatus(`The request failed: ${(error as Error).message}`, true);
  } finally {
    setRunning(false);
  }
}

/** Answers one approval; once every pending one is answered, the paused run continues. */
function answer(interruptId: string, isApproved: boolean): void {
  answers.push({ interruptId, status: 'resolved', payload: { approved: isApproved } });
  if (answers.length < agent.pendingInterrupts.length) return;
  const resume = answers;
  answers = [];
  // The approved call runs in the next run, which shows it again with its result and timing.
  for (const row of waitingRows) row.update(isApproved ? 'approved' : 'rejected');
  waitingRows = [];
  // The server holds the thread: a resume sends no messages.
  agent.setMessages([]);
  void run({ resume });
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (text === '' || agent.isRunning) return;
  question.value = '';
  log.addUser(text);
  // The server keeps the conversation in a session, so the page sends only the new message.
  agent.setMessages([{ id: newId(), role: 'user', content: text }]);
  void run({});
});

stopButton.addEventListener('click', () => {
  isStopping = true;
  // Closes the request; the server sees it close and cancels the run, its program and its tools.
  agent.abortRun();
});

byId('new-conversation').addEventListener('click', () => {
  if (agent.isRunning) agent.abortRun();
  localStorage.removeItem(threadKey);
  agent = new HttpAgent({ url: '/api/agent', threadId: currentThreadId() });
  log.clear();
  setRunning(false);
});

async function showModel(): Promise<void> {
  const info = (await (await fetch('/api/info')).json()) as { model: string; isScripted: boolean };
  byId('model').textContent = `model: ${info.model}${info.isScripted ? ' (no API key needed)' : ''}`;
}

async function showHistory(): Promise<void> {
  const response = await fetch(`/api/history?threadId=${encodeURIComponent(agent.threadId)}`);
  const { items, pendingApprovals } = (await response.json()) as {
    items: HistoryItem[];
    pendingApprovals: PendingApproval[];
  };
  for (const item of items) {
    if (item.kind === 'user') log.addUser(item.text);
    else if (item.kind === 'assistant') log.addAssistant(item.text);
    else if (item.kind === 'program') log.addProgram(item.source);
    else log.addToolCall(item.name).update(item.isError ? 'error' : 'done');
  }
  // A run paused for a person's approval before the reload: its calls wait here, and the answers
  // continue it as they would have before. A new client knows no interrupts until it is told.
  if (pendingApprovals.length > 0) {
    const interrupts = pendingApprovals.map(interruptOf);
    agent.pendingInterrupts = interrupts;
    showWaiting(
      pendingApprovals.map((pending) => log.addToolCall(pending.toolName)),
      interrupts,
    );
    setRunning(false);
  }
  document.body.dataset.ready = 'true';
}

await Promise.all([showModel(), showHistory()]);
