/**
 * Wraps the body of a Node probe, run with `node -e`: strict CommonJS with `require`, an async
 * body, and `report(value)`, which prints the one JSON line the suite reads from stdout. A probe
 * that throws reports `{ probeError }` and exits 70, so a broken probe is never mistaken for a denial.
 */
export function nodeProbe(body: string): string {
  return `'use strict';
const report = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
const attempt = async (action) => {
  try {
    return { isAllowed: true, value: await action() };
  } catch (error) {
    return { isAllowed: false, code: error && error.code, message: String(error && error.message) };
  }
};
(async () => {
${body}
})().catch((error) => {
  report({ probeError: String(error && error.stack) });
  process.exit(70);
});
`;
}

/** What `attempt(action)` reports: the action's value when it succeeded, else its error code. */
export type Attempt<Value = unknown> =
  | { readonly isAllowed: true; readonly value: Value }
  | { readonly isAllowed: false; readonly code?: string; readonly message: string };
