/** How a tool call ended, as its row shows it. */
type ToolCallStatus =
  | 'running'
  | 'done'
  | 'error'
  | 'cancelled'
  | 'waiting for approval'
  | 'approved'
  | 'rejected';

/** One tool call's row: its name, status and, once it ends, how long it took. */
export interface ToolCallRow {
  update(status: ToolCallStatus, milliseconds?: number): void;
  readonly status: ToolCallStatus;
}

function element<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  className: string,
  text = '',
): HTMLElementTagNameMap[Tag] {
  const created = document.createElement(tag);
  created.className = className;
  created.textContent = text;
  return created;
}

/** The conversation on the page: messages, programs, tool calls, approvals and run endings. */
export class ChatLog {
  readonly #root: HTMLElement;

  constructor(root: HTMLElement) {
    this.#root = root;
  }

  clear(): void {
    this.#root.replaceChildren();
  }

  addUser(text: string): void {
    this.#add(element('div', 'message user', text));
  }

  /** An assistant message; the returned element takes streamed text. */
  addAssistant(text = ''): HTMLElement {
    return this.#add(element('div', 'message assistant', text));
  }

  /** The program the model wrote, as code. */
  addProgram(source: string): void {
    const block = element('pre', 'program');
    block.append(element('code', 'language-js', source));
    this.#add(block);
  }

  addToolCall(name: string): ToolCallRow {
    const row = element('div', 'tool-call');
    const statusText = element('span', 'tool-status');
    const time = element('span', 'tool-time');
    row.append(element('span', 'tool-name', name), ' ', statusText, ' ', time);
    this.#add(row);
    let current: ToolCallStatus = 'running';
    const update = (status: ToolCallStatus, milliseconds?: number) => {
      current = status;
      row.dataset.status = status;
      statusText.textContent = status;
      time.textContent = milliseconds === undefined ? '' : `${Math.max(0, Math.round(milliseconds))} ms`;
    };
    update('running');
    return {
      update,
      get status() {
        return current;
      },
    };
  }

  /** An approval request with Approve and Reject buttons; `answer` hears the person's choice once. */
  addApproval(question: string, answer: (isApproved: boolean) => void): void {
    const box = element('div', 'approval');
    const approve = element('button', 'approve', 'Approve');
    const reject = element('button', 'reject', 'Reject');
    const choose = (isApproved: boolean) => {
      approve.disabled = true;
      reject.disabled = true;
      box.append(element('span', 'decision', isApproved ? 'approved' : 'rejected'));
      answer(isApproved);
    };
    approve.type = 'button';
    reject.type = 'button';
    approve.addEventListener('click', () => choose(true));
    reject.addEventListener('click', () => choose(false));
    box.append(element('span', 'question', question), approve, reject);
    this.#add(box);
  }

  /** How a run ended, when it did not simply answer. */
  addStatus(text: string, isError = false): void {
    this.#add(element('div', isError ? 'run-status error' : 'run-status', text));
  }

  #add<Added extends HTMLElement>(added: Added): Added {
    this.#root.append(added);
    added.scrollIntoView({ block: 'end' });
    return added;
  }
}
