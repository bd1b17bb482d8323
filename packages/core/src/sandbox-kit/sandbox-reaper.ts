import type { ChildProcess } from 'node:child_process';
import { isAbsolute } from 'node:path';
import type { Writable } from 'node:stream';
import { SandboxUnavailableError } from '../errors.js';
import { nodeChildProcess, nodeFs } from '../lazy-builtins.js';
import { beforeDeadline } from './process-waiting.js';

const { readFileSync } = nodeFs();

/**
 * What the reaper ends should this process die before releasing it: a directory it removes with
 * everything in it, a cgroup whose processes it kills before removing it, or a process it stops
 * and kills with everything below it (Linux only: it is told apart from a later process with the
 * same pid by its start time in `/proc`).
 */
export type ReapTarget =
  | { readonly directory: string }
  | { readonly cgroup: string }
  | { readonly process: number };

/** A target handed to the reaper by {@link reapOnParentDeath}. */
export interface ReapRegistration {
  /**
   * Tells the reaper to forget the target: call it once the target is gone (removed, killed), so
   * the reaper never touches it again, whoever reuses its path or pid. Idempotent.
   */
  release(): Promise<void>;
}

/**
 * The reaper, a `/bin/sh` script: it reads registrations from its stdin, whose other end only this
 * process holds, and when that ends (this process exited or was killed, at any moment, or released
 * everything) it ends what is still registered, in an order that leaves nothing running: every
 * registered process is stopped, then each of its descendants (a stopped process cannot start
 * another), then all of them are killed, so a pid namespace's init dies with the rest and no child
 * escapes by being re-parented; then each cgroup's members are killed and the cgroup removed;
 * then the directories are removed. A line is `+ <id> <kind> <data>` or `- <id>`; kinds are `p`
 * (pid and start time), `c` and `d` (a path, the rest of the line). POSIX sh with `local`, which
 * dash, bash, busybox and macOS's sh all have, and nothing forked until the end but rm and rmdir.
 * (In this template, `\${` and `\\` are the script's `${` and `\`.)
 */
export const reaperScript = `
trap '' HUP INT PIPE
ids=' '
while IFS= read -r line; do
  case $line in
    '+ '*)
      rest=\${line#+ }; id=\${rest%% *}; rest=\${rest#* }; kind=\${rest%% *}; data=\${rest#* }
      case $id in ''|*[!0-9]*) continue ;; esac
      eval "kind_$id=\\$kind; data_$id=\\$data"
      ids="$ids$id " ;;
    '- '*)
      id=\${line#- }
      case $id in ''|*[!0-9]*) continue ;; esac
      case $ids in *" $id "*) ids="\${ids%% $id *} \${ids#* $id }" ;; esac
      unset "kind_$id" "data_$id" ;;
  esac
done
start_time() {
  stat_line=
  read -r stat_line < "/proc/$1/stat" 2>/dev/null || return 1
  set -f; set -- \${stat_line##*) }; set +f
  shift 19
  started=$1
}
stop_tree() {
  local pid task kids kid
  pid=$1
  kill -STOP "$pid" 2>/dev/null || return 0
  stopped="$stopped $pid"
  for task in /proc/"$pid"/task/*; do
    kids=
    read -r kids < "$task/children" 2>/dev/null || :
    for kid in $kids; do stop_tree "$kid"; done
  done
}
reap_cgroup() {
  if [ -e "$1/cgroup.kill" ]; then echo 1 > "$1/cgroup.kill" 2>/dev/null || :; fi
  rounds=0
  while [ -d "$1" ] && [ "$rounds" -lt 100 ]; do
    while read -r member; do kill -KILL "$member" 2>/dev/null; done < "$1/cgroup.procs" 2>/dev/null
    rmdir "$1" 2>/dev/null && return 0
    rounds=$((rounds + 1))
    sleep 0.05 2>/dev/null || sleep 1
  done
}
stopped=
for id in $ids; do
  eval "kind=\\$kind_$id; data=\\$data_$id"
  if [ "$kind" = p ]; then
    pid=\${data%% *}; expected=\${data#* }
    if start_time "$pid" && [ "$started" = "$expected" ]; then stop_tree "$pid"; fi
  fi
done
for pid in $stopped; do kill -KILL "$pid" 2>/dev/null; done
for id in $ids; do
  eval "kind=\\$kind_$id; data=\\$data_$id"
  if [ "$kind" = c ]; then reap_cgroup "$data"; fi
done
for id in $ids; do
  eval "kind=\\$kind_$id; data=\\$data_$id"
  if [ "$kind" = d ]; then rm -rf -- "$data" 2>/dev/null; fi
done
`;

/** How long releasing the last target waits for the idle reaper to exit. */
const reaperExitMilliseconds = 5_000;

/** One running reaper: its input, and the registrations it holds. */
interface Reaper {
  readonly child: ChildProcess;
  readonly input: Writable;
  readonly exited: Promise<void>;
  /** The registrations it holds, by id: replayed to the next reaper should this one die. */
  readonly lines: Map<number, string>;
  /** Why it cannot take registrations (it failed to start, or died). */
  failure?: Error;
  isEnding: boolean;
}

/** Shared by every copy of `@ghost/core` in this thread, so one reaper serves all of them. */
interface ReaperState {
  current: Reaper | undefined;
  nextId: number;
  /** Registrations whose reaper died unexpectedly, replayed to the next one. */
  orphaned: Map<number, string>;
}

const stateKey = Symbol.for('ghost.sandbox.reaper');

function reaperState(): ReaperState {
  const holder = globalThis as { [stateKey]?: ReaperState };
  holder[stateKey] ??= { current: undefined, nextId: 1, orphaned: new Map() };
  return holder[stateKey];
}

/**
 * Hands `target` to this process's reaper, so that if this process dies (SIGKILL included) before
 * it calls `release()`, the target is ended anyway. Resolves once the registration is in the
 * reaper's pipe, so create the target only after it resolves: from then on, any death of this
 * process is followed by the target's end. The reaper is one `/bin/sh` process per Node thread,
 * started on the first registration and gone after the last release; it is in a session of its
 * own, so a terminal's Ctrl-C does not end it before it has done its work, and it does not keep
 * this process alive.
 *
 * A backend registers what it creates before it creates it: the kit registers each workspace from
 * {@link createSandboxWorkspace}; bwrap registers its cgroups, and its launcher, which waits until
 * it has been registered before it starts bubblewrap.
 *
 * @throws SandboxUnavailableError when the reaper cannot be started (no `/bin/sh`).
 *
 * @example
 * ```ts
 * const registration = await reapOnParentDeath({ cgroup: directory });
 * await mkdir(directory);
 * // ... the sandbox runs, then close() removed the cgroup:
 * await registration.release();
 * ```
 */
export async function reapOnParentDeath(target: ReapTarget): Promise<ReapRegistration> {
  const entry = formatTarget(target);
  if (entry === undefined) return { release: async () => {} };
  const state = reaperState();
  const id = state.nextId;
  state.nextId += 1;
  const line = `+ ${id} ${entry}\n`;
  const reaper = ensureReaper(state);
  reaper.lines.set(id, line);
  try {
    await writeTo(reaper, line);
  } catch (error) {
    reaper.lines.delete(id);
    await endIfIdle(state, reaper);
    throw error;
  }
  let releasing: Promise<void> | undefined;
  return {
    release() {
      releasing ??= release(state, reaper, id);
      return releasing;
    },
  };
}

/** The line's `<kind> <data>`, or undefined for a process already gone. */
function formatTarget(target: ReapTarget): string | undefined {
  if ('process' in target) {
    const pid = target.process;
    if (!Number.isSafeInteger(pid) || pid <= 1) {
      throw new RangeError(`The reaper takes a process id above 1, got ${pid}.`);
    }
    const started = startTime(pid);
    return started === undefined ? undefined : `p ${pid} ${started}`;
  }
  const [kind, path] = 'cgroup' in target ? ['c', target.cgroup] : ['d', target.directory];
  if (typeof path !== 'string' || !isAbsolute(path) || path === '/' || /[\n\0]/.test(path)) {
    throw new RangeError(
      `The reaper takes an absolute path other than / without a newline, got ${JSON.stringify(path)}.`,
    );
  }
  return `${kind} ${path}`;
}

/** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
function startTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function ensureReaper(state: ReaperState): Reaper {
  if (state.current !== undefined && !state.current.isEnding && state.current.failure === undefined) {
    return state.current;
  }
  const child = nodeChildProcess().spawn('/bin/sh', ['-c', reaperScript, 'ghost-sandbox-reaper'], {
    cwd: '/',
    env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
    // A session of its own: a signal to this process's group (Ctrl-C) must not end it first.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const input = child.stdin as Writable & { unref?: () => void };
  const reaper: Reaper = {
    child,
    input,
    exited: new Promise((resolve) => child.once('close', () => resolve())),
    lines: new Map(state.orphaned),
    isEnding: false,
  };
  state.orphaned.clear();
  child.on('error', (error) => {
    reaper.failure ??= error;
  });
  input.on('error', (error) => {
    reaper.failure ??= error;
  });
  child.once('exit', () => {
    if (reaper.isEnding) return;
    // It died with registrations: the next reaper takes them over.
    reaper.failure ??= new Error('the reaper exited');
    for (const [id, line] of reaper.lines) state.orphaned.set(id, line);
    if (state.current === reaper) state.current = undefined;
  });
  // Neither the reaper nor its pipe keeps this process alive.
  child.unref();
  input.unref?.();
  state.current = reaper;
  for (const line of reaper.lines.values()) input.write(line);
  return reaper;
}

/** Writes one line and resolves once it is in the pipe (Node writes small ones at once). */
function writeTo(reaper: Reaper, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) =>
      reject(
        new SandboxUnavailableError(
          `The sandbox reaper (/bin/sh), which cleans up after a parent that dies, could not take a registration: ${error instanceof Error ? error.message : String(error)}. Check that /bin/sh exists and can run.`,
          { cause: error, command: '/bin/sh' },
        ),
      );
    if (reaper.failure !== undefined) {
      fail(reaper.failure);
      return;
    }
    reaper.input.write(line, (error) => {
      if (error) fail(error);
      else if (reaper.failure !== undefined) fail(reaper.failure);
      else resolve();
    });
  });
}

async function release(state: ReaperState, reaper: Reaper, id: number): Promise<void> {
  state.orphaned.delete(id);
  if (!reaper.lines.delete(id)) return;
  if (reaper.failure === undefined && !reaper.isEnding) {
    await writeTo(reaper, `- ${id}\n`).catch(() => undefined);
  }
  await endIfIdle(state, reaper);
}

/** Ends the reaper once it holds nothing, and waits for it to exit, so nothing of it lingers. */
async function endIfIdle(state: ReaperState, reaper: Reaper): Promise<void> {
  if (reaper.lines.size > 0 || reaper.isEnding) return;
  reaper.isEnding = true;
  if (state.current === reaper) state.current = undefined;
  reaper.input.end();
  if (reaper.child.pid === undefined) return;
  await beforeDeadline(reaper.exited, Date.now() + reaperExitMilliseconds);
}
