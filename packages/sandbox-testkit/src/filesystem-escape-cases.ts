import { existsSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import {
  environmentEntriesIn,
  environmentListingArguments,
  listProcessEnvironment,
} from './outside-process-environment.js';
import { psPath } from './outside-process-table.js';
import {
  hardlinkEscapeProbe,
  listProcessEnvironmentProbe,
  readPathsProbe,
  symlinkEscapeProbe,
  writePathsProbe,
} from './probes/filesystem-probes.js';
import type { Attempt } from './probes/node-probe.js';

type Attempts = Record<string, Attempt>;

/**
 * Reads, writes and links that must not reach the machine's files (`filesystemIsolation`). On a
 * `platform` without /proc (macOS) the parent's environment is tried through `ps -E` instead.
 */
export function filesystemEscapeCases(platform: NodeJS.Platform): ConformanceCase[] {
  return [
    escapeCase({
      title: 'reads of /etc/shadow are denied',
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const run = await harness.runNode(readPathsProbe(['/etc/shadow']));
        expect(harness.report<Attempts>(run)['/etc/shadow']).toMatchObject({ isAllowed: false });
      },
    }),
    escapeCase({
      title: "reads of the parent's ~/.ssh are denied",
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const directory = join(homedir(), '.ssh');
        const paths = [
          directory,
          ...['id_rsa', 'id_ed25519', 'authorized_keys'].map((name) => join(directory, name)),
        ];
        const report = harness.report<Attempts>(await harness.runNode(readPathsProbe(paths)));
        for (const path of paths) expect(report[path], path).toMatchObject({ isAllowed: false });
      },
    }),
    escapeCase({
      title: 'reads of a secret outside the workspace are denied, by absolute path',
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const secret = await harness.outsideSecret();
        const run = await harness.runNode(readPathsProbe([secret.file, secret.directory]));
        const report = harness.report<Attempts>(run);
        expect(report[secret.file]).toMatchObject({ isAllowed: false });
        expect(report[secret.directory]).toMatchObject({ isAllowed: false });
        expect(run.stdout).not.toContain(secret.content);
      },
    }),
    parentEnvironmentCase(platform),
    escapeCase({
      title:
        'writes outside the workspace leave nothing outside (a temp dir outside, /etc, /, the home directory)',
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const marker = harness.marker();
        const outside = await harness.outsideDirectory();
        const paths = [join(outside, 'escape.txt'), `/etc/${marker}`, `/${marker}`, join(homedir(), marker)];
        // Unique names, so removing them afterwards can only remove what an escape created.
        for (const path of paths) harness.defer(() => rm(path, { force: true, recursive: true }));
        await harness.runNode(writePathsProbe(paths, marker));
        for (const path of paths) expect(existsSync(path), `${path} appeared outside`).toBe(false);
      },
    }),
    escapeCase({
      title: 'a symlink from the workspace does not lead to a directory outside',
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const secret = await harness.outsideSecret();
        const run = await harness.runNode(symlinkEscapeProbe(secret.directory, 'secret.txt'));
        harness.report(run);
        expect(run.stdout).not.toContain(secret.content);
        expect(existsSync(join(secret.directory, 'planted.txt')), 'a file was planted through the link').toBe(
          false,
        );
      },
    }),
    escapeCase({
      title: 'a hardlink from the workspace to a file outside cannot be made, read or written',
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const secret = await harness.outsideSecret();
        const workspace = await harness.workspace();
        const run = await harness.runNode(hardlinkEscapeProbe(secret.file), { workspace });
        harness.report(run);
        expect(run.stdout).not.toContain(secret.content);
        expect(await readFile(secret.file, 'utf8'), 'the file outside was changed').toBe(secret.content);
        const link = await stat(join(workspace, 'escape')).catch(() => undefined);
        const target = await stat(secret.file);
        expect(link?.ino === target.ino && link.dev === target.dev, 'the file outside was linked').toBe(
          false,
        );
      },
    }),
  ];
}

/**
 * The parent's environment is out of reach: through /proc on Linux, through the kernel's process
 * information (what `ps -E` reads) on a `platform` without /proc.
 */
function parentEnvironmentCase(platform: NodeJS.Platform): ConformanceCase {
  return platform === 'linux'
    ? escapeCase({
        title: "the parent's /proc/<pid>/environ cannot be read",
        needs: ['filesystemIsolation'],
        run: async (harness) => {
          const path = `/proc/${process.pid}/environ`;
          const outsideView = await readFile(path, 'latin1');
          const report = harness.report<Attempts>(await harness.runNode(readPathsProbe([path])));
          // Inside a PID namespace the same number is another process, or none: never this one.
          const attempt = report[path];
          expect(
            attempt?.isAllowed && attempt.value === outsideView,
            'the probe read the parent environment',
          ).toBe(false);
        },
      })
    : escapeCase({
        // No /proc: another process's environment is read through the kernel's process
        // information, which is what ps -E does.
        title:
          "the parent's environment cannot be read with ps -E (another process's arguments and environment)",
        needs: ['filesystemIsolation'],
        run: async (harness) => {
          const outsideView = await listProcessEnvironment(process.pid);
          const entries = environmentEntriesIn(outsideView, process.env);
          expect(entries, "ps outside shows the parent's environment (the control)").not.toEqual([]);
          const run = await harness.runNode(
            listProcessEnvironmentProbe(psPath, environmentListingArguments(platform, process.pid)),
            {
              subprocesses: 'allow',
              runtimePaths: [harness.nodePath, harness.probeDirectory, psPath],
            },
          );
          const { listing } = harness.report<{ listing: Attempt<string> }>(run);
          const seen = listing.isAllowed ? environmentEntriesIn(listing.value, process.env) : [];
          expect(seen, "the parent's environment entries ps showed inside").toEqual([]);
        },
      });
}
