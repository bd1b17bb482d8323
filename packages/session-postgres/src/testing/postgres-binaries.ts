import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** Where a working PostgreSQL server was found. */
export interface PostgresBinaries {
  /** The folder holding `initdb` and `postgres`. */
  readonly bindir: string;
  /** What `postgres --version` printed, such as `postgres (PostgreSQL) 15.18`. */
  readonly version: string;
}

/**
 * Whether the tests can start a real PostgreSQL here. `skip` only where `npm run setup` could not
 * have installed it (not Linux, or not root, or no apt-get); `missing` where it could have, which
 * the tests turn into a failure saying to run it.
 */
export type PostgresAvailability =
  | { readonly state: 'available'; readonly binaries: PostgresBinaries }
  | { readonly state: 'skip'; readonly reason: string }
  | { readonly state: 'missing'; readonly reason: string };

function findOnPath(name: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder !== '' && existsSync(join(folder, name))) return join(folder, name);
  }
  return undefined;
}

function versionNumber(folder: string): number {
  return Number.parseFloat(folder) || 0;
}

/** The folders that may hold the server, most likely first: pg_config's, Debian's, then PATH's. */
function candidateFolders(): string[] {
  const folders: string[] = [];
  const pgConfig = findOnPath('pg_config');
  if (pgConfig !== undefined) {
    try {
      folders.push(execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8', timeout: 10_000 }).trim());
    } catch {
      // a broken pg_config: try the other places
    }
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((left, right) => versionNumber(right) - versionNumber(left));
    for (const version of versions) folders.push(join(debian, version, 'bin'));
  }
  const onPath = findOnPath('postgres');
  if (onPath !== undefined) folders.push(dirname(onPath));
  return [...new Set(folders)];
}

/** The first folder whose `initdb` exists and whose `postgres --version` runs. */
function findPostgresBinaries(): PostgresBinaries | undefined {
  for (const bindir of candidateFolders()) {
    if (!existsSync(join(bindir, 'initdb')) || !existsSync(join(bindir, 'postgres'))) continue;
    try {
      const version = execFileSync(join(bindir, 'postgres'), ['--version'], {
        encoding: 'utf8',
        timeout: 10_000,
      }).trim();
      return { bindir, version };
    } catch {
      // present but does not run (a missing library): look further
    }
  }
  return undefined;
}

/** What decides whether the PostgreSQL tests run here. */
export interface PostgresFacts {
  readonly platform: NodeJS.Platform;
  readonly binaries: PostgresBinaries | undefined;
  readonly isRoot: boolean;
  readonly hasAptGet: boolean;
}

/**
 * Run where a server is found; skip (saying why) only where `npm run setup` could not have
 * installed one (not Linux, not root, or no apt-get); otherwise fail, saying to run it.
 */
export function decidePostgresAvailability(facts: PostgresFacts): PostgresAvailability {
  if (facts.platform !== 'linux') {
    return {
      state: 'skip',
      reason: `not Linux (${facts.platform}): setup installs PostgreSQL on Linux only`,
    };
  }
  if (facts.binaries !== undefined) return { state: 'available', binaries: facts.binaries };
  if (!facts.isRoot || !facts.hasAptGet) {
    return {
      state: 'skip',
      reason: `no PostgreSQL server binaries found, and setup cannot install them here (${facts.isRoot ? 'no apt-get' : 'not root'}); install Debian's postgresql package to run these tests`,
    };
  }
  return {
    state: 'missing',
    reason:
      "no working PostgreSQL server binaries found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH): run `npm run setup`, which installs Debian's postgresql package",
  };
}

/** {@link decidePostgresAvailability} for this machine. */
export function postgresAvailability(): PostgresAvailability {
  return decidePostgresAvailability({
    platform: process.platform,
    binaries: process.platform === 'linux' ? findPostgresBinaries() : undefined,
    isRoot: process.getuid?.() === 0,
    hasAptGet: findOnPath('apt-get') !== undefined,
  });
}

/** The identity the server runs as: postgres refuses root, so a root parent drops to another user. */
export interface ServerIdentity {
  readonly uid: number;
  readonly gid: number;
}

/** `undefined` when this process is not root (the server runs as this user). */
export function serverIdentity(): ServerIdentity | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const fields = line.split(':');
    if (fields[0] === 'postgres' && fields[2] !== undefined && fields[3] !== undefined) {
      return { uid: Number(fields[2]), gid: Number(fields[3]) };
    }
  }
  return { uid: 65534, gid: 65534 };
}

/** `setpriv` when it is there: it drops the identity and ties the server's life to its parent's. */
export function findSetpriv(): string | undefined {
  return findOnPath('setpriv');
}
