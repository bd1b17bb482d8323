import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

/**
 * Imports a package as the application would. Under pnpm a package sees only its own
 * dependencies, so a plain `import()` here would look in @ghost/core's dependencies, never in the
 * application's. The application's directory comes first; core's own location serves installs
 * where the two share a node_modules.
 */
export async function importFromApplication(specifier: string): Promise<unknown> {
  const bases = [join(process.cwd(), 'package.json'), fileURLToPath(import.meta.url)];
  let firstMiss: unknown;
  for (const base of bases) {
    let resolved: string;
    try {
      resolved = createRequire(base).resolve(specifier);
    } catch (error) {
      if (errorCode(error) !== 'MODULE_NOT_FOUND') throw error;
      firstMiss ??= error;
      continue;
    }
    return import(pathToFileURL(resolved).href);
  }
  throw firstMiss;
}

/**
 * True when `error` says the package `specifier` itself is missing. Node quotes the specifier it
 * could not find ("Cannot find package '@ghost/x' imported from ..."); matching the quoted name
 * tells "the plugin package is missing" apart from "the plugin's own dependency or build output
 * is missing", which is a load failure, not a missing install.
 */
export function isMissingPackage(error: unknown, specifier: string): boolean {
  const code = errorCode(error);
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return error instanceof Error && error.message.includes(`'${specifier}'`);
}

/** The command that installs the package of `specifier`: `pnpm add @ghost/provider-openai`. */
export function installCommand(specifier: string): string {
  // A subpath such as '@ghost/provider-openai/chat' is installed as its package.
  const parts = specifier.split('/');
  const packageName = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
  return `pnpm add ${packageName}`;
}
