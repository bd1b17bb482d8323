#!/usr/bin/env node
// ghost-quickjs-snapshot: builds the QuickJS host's startup snapshot for the Node that runs it.
// The package's build runs it; an application that installs the package runs it once per Node
// install (in its image's build step, say), since a snapshot fits only the Node that built it.
import { buildHostSnapshot, hostSnapshotBlob } from './host-start.js';

try {
  await buildHostSnapshot();
  console.log(
    `ghost-quickjs-snapshot: QuickJS hosts on Node ${process.version} now start from ${hostSnapshotBlob}`,
  );
} catch (error) {
  console.error(
    `ghost-quickjs-snapshot: ${(error as Error).message}\nQuickJS hosts start from their script instead (about 8 ms slower).`,
  );
  process.exitCode = 1;
}
