/**
 * Runs tasks one at a time, in the order they were queued. A task's failure is its caller's alone:
 * the next task runs either way.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task` behind every task queued before it and settles as it does. */
  run<Value>(task: () => Promise<Value>): Promise<Value> {
    const result = this.#tail.then(task);
    this.#tail = result.then(ignore, ignore);
    return result;
  }
}

function ignore(): void {}

interface SharedQueue {
  readonly queue: SerialQueue;
  users: number;
}

const queuesByFile = new Map<string, SharedQueue>();

/**
 * The queue every store in this process uses for the database file `file` (its real path), so
 * that two stores over one file never wait for each other inside SQLite: its busy wait blocks the
 * thread, so a store waiting there for a transaction another store of this thread holds open would
 * wait out its whole busy timeout. Call the returned function once when the store no longer needs it.
 */
export function shareFileQueue(file: string): { readonly queue: SerialQueue; readonly unshare: () => void } {
  let shared = queuesByFile.get(file);
  if (shared === undefined) {
    shared = { queue: new SerialQueue(), users: 0 };
    queuesByFile.set(file, shared);
  }
  shared.users += 1;
  const entry = shared;
  let isShared = true;
  return {
    queue: entry.queue,
    unshare: () => {
      if (!isShared) return;
      isShared = false;
      entry.users -= 1;
      if (entry.users === 0 && queuesByFile.get(file) === entry) queuesByFile.delete(file);
    },
  };
}
