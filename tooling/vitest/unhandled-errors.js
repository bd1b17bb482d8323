// Fails the test during which the process saw an unhandled rejection or an uncaught exception.
// Vitest reports such errors for the whole run, but keeps every test green; naming the test
// that caused it is what turns "the parent process would have crashed" into a red test. Code
// must handle every promise it creates: a floating rejection kills a real Node process.
import { afterAll, afterEach } from 'vitest';

const registered = Symbol.for('ghost.unhandledErrors');

/** @type {{ kind: string, error: unknown }[]} */
const seen = globalThis[registered] ?? [];
if (globalThis[registered] === undefined) {
  globalThis[registered] = seen;
  process.on('unhandledRejection', (reason) => seen.push({ kind: 'unhandled rejection', error: reason }));
  process.on('uncaughtException', (error) => seen.push({ kind: 'uncaught exception', error }));
}

function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}\n${error.stack ?? ''}`;
  return String(error);
}

/** Lets rejections of the test's last turn surface: Node reports them after the microtasks run. */
function nextTurn() {
  return new Promise((resolve) => setImmediate(resolve));
}

async function failOnUnhandledErrors(when) {
  await nextTurn();
  await nextTurn();
  if (seen.length === 0) return;
  const found = seen.splice(0);
  const error = new Error(
    `${found.length} unhandled error(s) ${when}; the parent process would have crashed:\n${found
      .map(({ kind, error: cause }) => `- ${kind}: ${describe(cause)}`)
      .join('\n')}`,
  );
  error.name = 'UnhandledErrorsInTest';
  throw error;
}

afterEach(() => failOnUnhandledErrors('during this test'));
afterAll(() => failOnUnhandledErrors('after the last test of this file'));
