import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's directory. */
const packageDirectory = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** The built entry of this package, as an installed application loads it. */
export const builtEntry = join(packageDirectory, 'dist', 'index.js');

/** The built kit (`@ghost/core/sandbox`) this package's dist loads. */
export const builtKit = join(
  packageDirectory,
  'node_modules',
  '@ghost',
  'core',
  'dist',
  'sandbox-kit',
  'index.js',
);

/** The newest modification time of the sources (not tests) under `directory`. */
function newestSource(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/**
 * Whether this package's dist/ and the core kit's were built after the last change to their
 * sources, so a child process loading them runs the code under test (tests that start a parent
 * process of their own load the built packages, as an application would).
 */
export function isBuildCurrent(): boolean {
  const core = join(packageDirectory, 'node_modules', '@ghost', 'core');
  try {
    return (
      newestSource(join(packageDirectory, 'src')) <= statSync(builtEntry).mtimeMs &&
      newestSource(join(core, 'src')) <= statSync(builtKit).mtimeMs
    );
  } catch {
    return false;
  }
}
