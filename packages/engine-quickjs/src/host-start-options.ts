import {
  buildCachedHostSnapshotInBackground,
  cachedHostSnapshot,
  hostSnapshotCacheDirectory,
} from './host-snapshot-cache.js';
import { hostSnapshotBlob, hostV8Options, isHostSnapshotUsable } from './host-start.js';

/** How a QuickJS process host starts: its Node options, and what it reads beyond the package. */
export interface HostStartOptions {
  /** The host's V8 flags and, when a startup snapshot fits this Node, `--snapshot-blob`. */
  readonly nodeOptions: readonly string[];
  /** The cache's snapshot file when hosts start from it, for the sandbox to let the host read. */
  readonly readPaths: readonly string[];
}

const fromScript: HostStartOptions = { nodeOptions: hostV8Options, readPaths: [] };

/**
 * How the next QuickJS process host starts. With a startup snapshot that fits this Node, Node
 * runs the snapshot's main function instead of the host script (which stays on the command line
 * as `argv[1]`), skipping the loading and compiling of the host's code and Node's own modules at
 * every start. The snapshot is the package's own (`dist/host.blob`, made by the monorepo's build
 * or by `ghost-quickjs-snapshot`) when it fits, else the user's cached one (`host-snapshot-cache.ts`).
 * When neither fits, the host starts from the bundled script and, once per process, a build of
 * the cached snapshot starts in the background (unless `GHOST_QUICKJS_SNAPSHOT_CACHE=off`).
 * Never throws: whatever goes wrong with the cache, hosts start from the script.
 */
export function hostStartOptions(environment: NodeJS.ProcessEnv = process.env): HostStartOptions {
  if (isHostSnapshotUsable()) {
    return { nodeOptions: [...hostV8Options, `--snapshot-blob=${hostSnapshotBlob}`], readPaths: [] };
  }
  const directory = hostSnapshotCacheDirectory(environment);
  if (directory === undefined) return fromScript;
  try {
    const cached = cachedHostSnapshot(directory);
    if (cached !== undefined) {
      return { nodeOptions: [...hostV8Options, `--snapshot-blob=${cached}`], readPaths: [cached] };
    }
  } catch {
    return fromScript;
  }
  buildCachedHostSnapshotInBackground(directory);
  return fromScript;
}
