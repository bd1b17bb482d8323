import type { Readable } from 'node:stream';

/**
 * Resolves once every stream has ended or closed, or after `milliseconds`, whichever is first.
 * Sandbox backends wait this long after a process exits so its last output is read, bounded
 * because a background child may hold the pipes open for ever.
 */
export function streamsSettled(streams: readonly Readable[], milliseconds: number): Promise<void> {
  const open = streams.filter((stream) => !stream.readableEnded && !stream.destroyed);
  if (open.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    timer.unref();
    let pending = open.length;
    for (const stream of open) {
      let counted = false;
      const done = () => {
        if (counted) return;
        counted = true;
        pending -= 1;
        if (pending === 0) {
          clearTimeout(timer);
          resolve();
        }
      };
      stream.once('end', done);
      stream.once('close', done);
    }
  });
}

/**
 * Waits for `promise` until `deadline` (a `Date.now()` value); undefined when the deadline came
 * first. The timer is not unref'd, on purpose: a process must not exit while a cleanup still
 * confirms that what it killed is gone.
 */
export async function beforeDeadline<Value>(
  promise: Promise<Value>,
  deadline: number,
): Promise<Value | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
