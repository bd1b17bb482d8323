import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/**
 * Imports a built-in plugin package (`@ghost/engine-quickjs`, `@ghost/sandbox-bwrap`, ...) first
 * from this package's own dependencies, so an installed `ghost-mcp` finds its engine and sandbox
 * wherever it is started, then from the current directory, where a user may have installed an
 * optional one such as `@ghost/engine-v8`. A package found in neither place rejects with Node's
 * own not-found error, which the registry turns into a message naming the package to install.
 */
export async function importFromPackage(specifier: string): Promise<unknown> {
  try {
    return await import(specifier);
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    const fromWorkingDirectory = createRequire(join(process.cwd(), 'ghost-mcp.cjs'));
    let resolved: string;
    try {
      resolved = fromWorkingDirectory.resolve(specifier);
    } catch {
      throw error;
    }
    return import(pathToFileURL(resolved).href);
  }
}
