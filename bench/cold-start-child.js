// One cold-start figure, measured in a fresh Node started by cold-start.js. The step to measure is
// the first argument; the figures are printed as one JSON line on stdout. Imports are dynamic so
// the timer starts before anything of Ghost or typebox is loaded.
const step = process.argv[2];

/** Milliseconds since `startedAt`. */
const since = (startedAt) => performance.now() - startedAt;

async function importCore() {
  const startedAt = performance.now();
  await import('@ghost/core');
  return { import: since(startedAt) };
}

async function importCodeMode() {
  const startedAt = performance.now();
  await import('@ghost/core');
  await import('@ghost/code-mode');
  await import('@ghost/engine-quickjs');
  return { import: since(startedAt) };
}

/** What an application defining one tool with typebox pays before and at its first tool call. */
async function toolWithTypebox() {
  const startedAt = performance.now();
  const { default: Type } = await import('typebox');
  const { defineTool } = await import('@ghost/core');
  const lookup = defineTool({
    name: 'lookup',
    description: 'Finds a thing.',
    input: Type.Object({ query: Type.String() }),
    execute: ({ query }) => query,
  });
  const defined = since(startedAt);
  const problems = lookup.validateInput({ query: 1 });
  if (problems.length !== 1) throw new Error('bench tool validation did not report the wrong type');
  return { defined, validated: since(startedAt) };
}

/** Imports, then opens a QuickJS session in the native sandbox and runs `1`. */
async function sessionInSandbox() {
  const { openCodeModeSession } = await import('@ghost/code-mode');
  const { quickjsEngine } = await import('@ghost/engine-quickjs');
  const openedAt = performance.now();
  const opened = await openCodeModeSession({ engine: quickjsEngine, sandbox: 'native' });
  const open = since(openedAt);
  const executedAt = performance.now();
  const result = await opened.session.execute('1');
  const firstExec = since(executedAt);
  if (result.status !== 'completed' || result.value !== 1) {
    throw new Error(`bench program failed: ${JSON.stringify(result)}`);
  }
  // The parent's clock stops at this line: spawn → first result.
  process.stdout.write(`${JSON.stringify({ open, firstExec })}\n`);
  await opened.close();
  return undefined;
}

const steps = {
  'import-core': importCore,
  'import-code-mode': importCodeMode,
  tool: toolWithTypebox,
  session: sessionInSandbox,
};
const measureStep = steps[step];
if (measureStep === undefined) throw new Error(`unknown cold-start step ${step}`);
const figures = await measureStep();
if (figures !== undefined) process.stdout.write(`${JSON.stringify(figures)}\n`);
