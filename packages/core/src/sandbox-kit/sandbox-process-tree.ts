/**
 * Everything a sandboxed process started, as its backend reaches it: a process group, a pid
 * namespace, a cgroup. {@link superviseSandboxProcess} signals it from `kill()`, the wall timer
 * and the abort signal, and `close()` terminates it until it is gone. {@link processGroupTree}
 * is the one for a child started in its own process group; a backend with a stronger hold (a
 * pid namespace, a cgroup) implements its own.
 *
 * @example
 * ```ts
 * const tree: SandboxProcessTree = {
 *   signal: (signal) => jail.signalAll(signal),
 *   terminate: async () => { jail.signalAll('SIGKILL'); return (await jail.members()).length === 0; },
 *   summarizeSurvivors: async () => `processes ${(await jail.members()).join(', ')} of jail ${jail.id}`,
 *   release: () => jail.remove(),
 * };
 * ```
 */
export interface SandboxProcessTree {
  /**
   * Sends `signal` to the processes of the tree. `SIGKILL` must reach every one the backend can
   * reach. A tree that has already ended is not an error; a signal the operating system refuses
   * (EPERM) may throw, and reaches the caller of `kill()`.
   */
  signal(signal: NodeJS.Signals): void;
  /**
   * Sends `SIGKILL` to whatever is left and resolves true once nothing of the tree runs any more
   * (zombies waiting to be reaped run nothing and do not count). `close()` calls it again and again
   * until it is true or the close deadline passes; it must not reject.
   */
  terminate(): Promise<boolean>;
  /**
   * Names what still runs, for the `CleanupError` of a `close()` that gave up, such as
   * `processes 12, 14 of group 12`. Called only after {@link terminate} kept answering false.
   */
  summarizeSurvivors(): Promise<string>;
  /**
   * Frees what held the tree (a cgroup directory), once `close()` has terminated it or given up.
   * A rejection becomes one of the problems of `close()`'s `CleanupError`.
   */
  release?(): Promise<void>;
}
