import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nativeProbeSource } from './native-probe-source.js';

const run = promisify(execFile);

/** The compiled native probe, or why there is none (then the cases that need it skip with it). */
export type NativeProbe = { readonly path: string } | { readonly missingReason: string };

/** The compiler flags per platform: static on Linux; macOS has no static C library, and gets the POSIX modes. */
const compilerFlagsByPlatform: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ['-static', '-O1'],
  darwin: ['-O1', '-DGHOST_PROBE_POSIX_ONLY'],
};

/**
 * Compiles the native probe into `directory` for `platform` (this machine's; a test may build
 * macOS's POSIX-only probe on Linux), trying `$CC`, `cc`, `gcc` and `clang` in turn. Never
 * throws: a machine without a compiler still runs every other case.
 */
export async function compileNativeProbe(
  directory: string,
  platform: NodeJS.Platform = process.platform,
): Promise<NativeProbe> {
  const flags = compilerFlagsByPlatform[platform];
  if (flags === undefined) {
    return { missingReason: `the native probe is built on Linux and macOS only, this is ${platform}` };
  }
  const source = join(directory, 'native-probe.c');
  const binary = join(directory, 'ghost-testkit-probe');
  await writeFile(source, nativeProbeSource);
  const compilers = [process.env.CC, 'cc', 'gcc', 'clang'].filter(
    (compiler): compiler is string => compiler !== undefined && compiler !== '',
  );
  const failures: string[] = [];
  for (const compiler of compilers) {
    try {
      await run(compiler, [...flags, '-o', binary, source], { timeout: 60_000 });
      return { path: binary };
    } catch (error) {
      failures.push(`${compiler}: ${compileFailure(error)}`);
    }
  }
  return { missingReason: `no C compiler could build the native probe (${failures.join('; ')})` };
}

function compileFailure(error: unknown): string {
  const { code, stderr } = error as { code?: unknown; stderr?: unknown };
  if (code === 'ENOENT') return 'not found';
  const firstLine = typeof stderr === 'string' ? stderr.trim().split('\n')[0] : undefined;
  return firstLine || (error instanceof Error ? error.message : String(error));
}
