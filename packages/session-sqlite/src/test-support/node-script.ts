import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
const built = [
  fileURLToPath(new URL('../../dist/index.js', import.meta.url)),
  fileURLToPath(new URL('../../../core/dist/index.js', import.meta.url)),
];

/** The scripts import the built packages, as an application would: fail early, saying how to build. */
export function requireBuiltPackages(): void {
  for (const file of built) {
    if (!existsSync(file)) {
      throw new Error(
        `${file} is missing: run pnpm build first (or pnpm exec turbo run build --filter=@ghost/session-sqlite...).`,
      );
    }
  }
}

/** A `node` process running one of the scripts beside this file. */
export interface NodeScript {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every line it printed so far. */
  readonly lines: readonly string[];
  /** Resolves with the first line (printed so far or later) that `match` accepts; rejects if it exits first. */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /** Writes a line to its standard input. */
  send(line: string): void;
  /** How it ended. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** What it wrote to standard error. */
  stderr(): string;
}

const running = new Set<ChildProcess>();

/** Starts `node src/test-support/<script> ...args` from the package folder (no source condition). */
export function startNodeScript(script: string, args: readonly string[]): NodeScript {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url)), ...args], {
    cwd: packageRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: string[] = [];
  let partial = '';
  let errors = '';
  let waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  child.stdin?.on('error', () => {}); // a killed child closes its end: writes after that are moot
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    partial += chunk;
    let newline = partial.indexOf('\n');
    while (newline >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      lines.push(line);
      const ready = waiters.filter((waiter) => waiter.match(line));
      waiters = waiters.filter((waiter) => !ready.includes(waiter));
      for (const waiter of ready) waiter.resolve(line);
      newline = partial.indexOf('\n');
    }
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (errors.length < 64 * 1024) errors += chunk;
  });
  if (child.pid === undefined) throw new Error(`could not start ${script}`);
  return {
    child,
    pid: child.pid,
    lines,
    waitForLine: (match) => {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(({ code, signal }) =>
          reject(
            new Error(`${script} ended (${code ?? signal}) before the line expected; stderr: ${errors}`),
          ),
        );
      });
    },
    send: (line) => {
      child.stdin?.write(`${line}\n`);
    },
    exited,
    stderr: () => errors,
  };
}

/** Kills every script still running (stopped ones included) and waits until each is reaped. */
export async function stopNodeScripts(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            resolve();
            return;
          }
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
