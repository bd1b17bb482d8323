import { access, constants } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

/** Where programs are looked for besides `PATH`: a service's environment often has a short `PATH`. */
const standardDirectories = ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** The absolute path of an executable named `name` (or `name` itself when absolute), or undefined. */
export async function findExecutable(name: string): Promise<string | undefined> {
  const candidates = isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? '').split(delimiter).filter(isAbsolute), ...standardDirectories].map(
        (directory) => join(directory, name),
      );
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
