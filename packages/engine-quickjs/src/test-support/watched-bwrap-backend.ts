import {
  defineSandboxBackend,
  type SandboxBackendV1,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';

// Bubblewrap with a window on each host's channel, for tests that tell hosts apart by what the
// parent sent them and what they said: real sandboxes, real hosts, only observed.

/** What a test records of one host: told of every chunk the parent writes and the host sends. */
export interface HostWatcher {
  written(chunk: string): void;
  received(chunk: string): void;
}

/**
 * The bubblewrap backend, but each spawn calls `watch` with its spec and started process, and the
 * watcher it returns sees the host's channel from then on.
 */
export function watchedBwrapBackend(
  watch: (spec: SandboxSpawnSpec, started: SandboxProcess) => HostWatcher,
): SandboxBackendV1 {
  return defineSandboxBackend({
    ...bwrapSandbox,
    async spawn(spec) {
      const started = await bwrapSandbox.spawn(spec);
      const watcher = watch(spec, started);
      const write = started.channel.write.bind(started.channel) as (...args: unknown[]) => boolean;
      started.channel.write = ((chunk: unknown, ...rest: unknown[]) => {
        watcher.written(String(chunk));
        return write(chunk, ...rest);
      }) as typeof started.channel.write;
      started.channel.on('data', (chunk: Buffer) => watcher.received(chunk.toString()));
      return started;
    },
  });
}
