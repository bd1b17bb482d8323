import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import { ConfigurationError } from '@ghost/core';

/**
 * Resolves an absolute path to the one the file system knows it by, following every symbolic
 * link, as `realpath(3)` does. Throws (an error with `code` `ENOENT` or `ENOTDIR`) for a path that
 * does not exist.
 */
export type Realpath = (path: string) => string;

/**
 * The longest path macOS accepts, in bytes: `PATH_MAX` (1024) counts the terminating NUL. The
 * kernel refuses a longer one (`ENAMETOOLONG`), so a filter naming it could never match.
 */
const largestMacPathBytes = 1023;

/**
 * The symbolic links at the top of every macOS file system: seatbelt matches the path a file
 * resolves to, so a filter on `/tmp/x` would match nothing, and `/private/tmp/x` is meant.
 */
const macAliases: readonly (readonly [alias: string, target: string])[] = [
  ['/etc', '/private/etc'],
  ['/tmp', '/private/tmp'],
  ['/var', '/private/var'],
];

/**
 * The realpath used when none is given: the file system's own on macOS. Elsewhere a profile is
 * only being reviewed, and this machine's links (Linux's `/var/run` → `/run`) say nothing about a
 * Mac's, so every path is taken as written, with macOS's own links applied.
 */
export const defaultRealpath: Realpath =
  process.platform === 'darwin'
    ? (path) => realpathSync.native(path)
    : (path) => {
        throw Object.assign(new Error(`${path} is not looked up off macOS.`), { code: 'ENOENT' });
      };

/**
 * Turns the absolute paths of a spawn spec into the canonical paths seatbelt filters must name:
 * every symbolic link followed (through the given {@link Realpath}), macOS's `/tmp`, `/var` and
 * `/etc` links applied, and no `//`, `/./`, `..` or trailing `/` left, since a filter holding any
 * of them silently matches nothing. A path that does not exist is resolved as far as it exists
 * and taken as written from there. One resolver serves one profile and remembers its answers.
 */
export class MacPathResolver {
  readonly #realpath: Realpath;
  readonly #canonical = new Map<string, string>();

  constructor(realpath: Realpath) {
    this.#realpath = realpath;
  }

  /**
   * The canonical form of `path`, named `field` in error messages.
   *
   * @throws ConfigurationError for a path that is not absolute, is not valid Unicode, is longer
   *   than macOS allows, or cannot be resolved for another reason than not existing.
   */
  canonical(path: string, field: string): string {
    requireMacPath(path, field);
    let canonical = this.#canonical.get(path);
    if (canonical === undefined) {
      canonical = this.#resolve(path, field);
      requireMacPath(canonical, field);
      this.#canonical.set(path, canonical);
    }
    return canonical;
  }

  /**
   * The symbolic links met on the way to `path`, each named by where it is (its directory
   * canonical, its own name as written): to follow a link, a process must read it, so a profile
   * that grants `path` grants reading these links too.
   */
  symlinksOnTheWay(path: string, field: string): string[] {
    const components = significantComponents(path);
    const links: string[] = [];
    for (let index = 0; index < components.length; index += 1) {
      const name = components[index] as string;
      if (name === '..') continue;
      const parent = this.canonical(`/${components.slice(0, index).join('/')}`, field);
      const location = parent === '/' ? `/${name}` : `${parent}/${name}`;
      const resolved = this.canonical(`/${components.slice(0, index + 1).join('/')}`, field);
      if (location !== resolved) links.push(requireMacPath(location, field));
    }
    return links;
  }

  /** Resolves the longest prefix of `path` that exists, then appends the rest as written. */
  #resolve(path: string, field: string): string {
    const components = significantComponents(path);
    for (let length = components.length; length >= 0; length -= 1) {
      const prefix = `/${components.slice(0, length).join('/')}`;
      let resolved: string;
      try {
        resolved = this.#realpath(prefix);
      } catch (error) {
        if (isMissing(error) && length > 0) continue;
        if (isMissing(error)) break;
        throw new ConfigurationError(
          `The spawn spec's ${field} ${JSON.stringify(path)} could not be resolved: ${(error as Error).message}. Use a path this user can reach.`,
          { cause: error, option: field, path },
        );
      }
      if (typeof resolved !== 'string' || !resolved.startsWith('/')) {
        throw new ConfigurationError(
          `The spawn spec's ${field} ${JSON.stringify(path)} resolved to ${JSON.stringify(resolved)}, which is not an absolute path.`,
          { option: field, path },
        );
      }
      return withMacAliases(posix.normalize([resolved, ...components.slice(length)].join('/')));
    }
    return withMacAliases(posix.normalize(`/${components.join('/')}`));
  }
}

/** The components of an absolute path without the empty and `.` ones, which never change it. */
function significantComponents(path: string): string[] {
  return path.split('/').filter((component) => component !== '' && component !== '.');
}

function withMacAliases(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  for (const [alias, target] of macAliases) {
    if (trimmed === alias || trimmed.startsWith(`${alias}/`)) return target + trimmed.slice(alias.length);
  }
  return trimmed;
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** A UTF-16 surrogate without its pair: text no file name can hold. */
const hasLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks what every path in a profile must be, and returns it: absolute, valid Unicode (a lone
 * surrogate has no UTF-8 form, so no file can have that name), no NUL, and short enough for macOS.
 */
function requireMacPath(path: string, field: string): string {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ConfigurationError(
      `The spawn spec's ${field} must be an absolute path starting with '/', got ${JSON.stringify(path)}.`,
      { option: field },
    );
  }
  if (hasLoneSurrogate.test(path)) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${JSON.stringify(path)} is not valid Unicode (a lone surrogate), so no file on macOS can have that name.`,
      { option: field },
    );
  }
  if (path.includes('\0')) {
    throw new ConfigurationError(`The spawn spec's ${field} contains a NUL byte, which no path can hold.`, {
      option: field,
    });
  }
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > largestMacPathBytes) {
    throw new ConfigurationError(
      `The spawn spec's ${field} is ${bytes} bytes long once resolved; macOS accepts at most ${largestMacPathBytes}. Use a shorter path.`,
      { option: field },
    );
  }
  return path;
}
