import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chown, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  findSetpriv,
  type PostgresBinaries,
  postgresAvailability,
  type ServerIdentity,
  serverIdentity,
} from './postgres-binaries.js';

const superuser = 'ghost';
const startTimeoutMs = 30_000;
const stopTimeoutMs = 10_000;

/** How to start one program of the server as the server's identity. */
export interface ServerCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Set when the identity is dropped by spawn itself (no setpriv). */
  readonly uid?: number;
  readonly gid?: number;
}

/**
 * The command line that runs `binary` as `identity`. With setpriv, `--pdeathsig QUIT` makes the
 * kernel send the server SIGQUIT (immediate shutdown, which ends its backends) when the process that
 * started it dies, even by SIGKILL: a test runner that is killed leaves no server behind.
 */
function serverCommand(
  binary: string,
  args: readonly string[],
  identity: ServerIdentity | undefined,
  options: { readonly diesWithParent: boolean },
): ServerCommand {
  const setpriv = findSetpriv();
  if (setpriv === undefined) {
    return identity === undefined
      ? { command: binary, args }
      : { command: binary, args, uid: identity.uid, gid: identity.gid };
  }
  const drop =
    identity === undefined
      ? []
      : ['--reuid', String(identity.uid), '--regid', String(identity.gid), '--clear-groups'];
  const death = options.diesWithParent ? ['--pdeathsig', 'QUIT'] : [];
  return { command: setpriv, args: [...drop, ...death, '--', binary, ...args] };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Keeps the last bytes a process wrote, for error messages. */
function tailOf(child: ChildProcess, maxBytes = 8_192): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-maxBytes);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

async function runToEnd(command: ServerCommand, what: string): Promise<void> {
  const child = spawn(command.command, command.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
    ...(command.uid === undefined ? {} : { uid: command.uid, gid: command.gid }),
  });
  const output = tailOf(child);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`${what} failed (exit ${code ?? signal}):\n${output()}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when `child` exits, or `false` after `ms`. */
async function exitWithin(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  let timer: NodeJS.Timeout | undefined;
  const exited = once(child, 'exit').then(() => true);
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([exited, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** The pids of `pid` and every process below it, read from /proc. */
export async function processTree(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    if (fields[0] === 'Z' || !Number.isInteger(parent)) continue;
    parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)]);
  }
  const alive = await readFile(`/proc/${pid}/stat`, 'utf8').then(
    (stat) => stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z',
    () => false,
  );
  if (!alive) return [];
  const tree = [pid];
  for (let index = 0; index < tree.length; index += 1) tree.push(...(parents.get(tree[index] ?? -1) ?? []));
  return tree;
}

/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temporary folder, then `postgres` on a
 * free loopback port with its socket in that folder, fsync off. Runs as an unprivileged user when
 * this process is root (postgres refuses root). `destroy()` stops the server and removes the folder.
 */
export class PostgresTestCluster {
  /** The server binaries it runs. */
  readonly binaries: PostgresBinaries;
  /** The temporary folder holding its data and socket, removed by `destroy()`. */
  readonly directory: string;
  /** The user it runs as when this process is root; `undefined` when it runs as this process's user. */
  readonly identity: ServerIdentity | undefined;
  /** The loopback port it listens on, once started (kept across `stopServer`/`startServer`). */
  port = 0;
  #server: ChildProcess | undefined;
  #output: () => string = () => '';
  #databases = 0;
  #isDestroyed = false;

  private constructor(binaries: PostgresBinaries, directory: string, identity: ServerIdentity | undefined) {
    this.binaries = binaries;
    this.directory = directory;
    this.identity = identity;
  }

  /** Creates and starts a cluster; on failure removes whatever it made. */
  static async start(binaries: PostgresBinaries): Promise<PostgresTestCluster> {
    const identity = serverIdentity();
    // A dropped identity must reach the folder: /tmp is open to every user, a root TMPDIR may not be.
    const parent = identity === undefined ? tmpdir() : '/tmp';
    const directory = await mkdtemp(join(parent, 'ghost-pg-'));
    const cluster = new PostgresTestCluster(binaries, directory, identity);
    try {
      await mkdir(cluster.socketDirectory);
      if (identity !== undefined) {
        await chown(directory, identity.uid, identity.gid);
        await chown(cluster.socketDirectory, identity.uid, identity.gid);
      }
      await runToEnd(
        serverCommand(
          join(binaries.bindir, 'initdb'),
          [
            '-D',
            cluster.dataDirectory,
            '-U',
            superuser,
            '-A',
            'trust',
            '-E',
            'UTF8',
            '--locale=C',
            '--no-sync',
          ],
          identity,
          { diesWithParent: true },
        ),
        'initdb',
      );
      await cluster.startServer();
      return cluster;
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
  }

  get dataDirectory(): string {
    return join(this.directory, 'data');
  }

  get socketDirectory(): string {
    return join(this.directory, 'socket');
  }

  /** The postmaster's pid while it runs. */
  get pid(): number | undefined {
    const server = this.#server;
    return server !== undefined && server.exitCode === null && server.signalCode === null
      ? server.pid
      : undefined;
  }

  /** @internal The command that starts the server on `port`, for the test that kills its parent. */
  serverCommand(port: number): ServerCommand {
    return serverCommand(
      join(this.binaries.bindir, 'postgres'),
      [
        '-D',
        this.dataDirectory,
        '-p',
        String(port),
        '-k',
        this.socketDirectory,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ],
      this.identity,
      { diesWithParent: true },
    );
  }

  /** Starts the server (again, after `stopServer`, on the same port); waits until it takes connections. */
  async startServer(): Promise<void> {
    if (this.#server !== undefined) throw new Error('the test cluster is already running');
    for (let attempt = 1; ; attempt += 1) {
      const port = this.port === 0 ? await freePort() : this.port;
      const command = this.serverCommand(port);
      const server = spawn(command.command, command.args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
        ...(command.uid === undefined ? {} : { uid: command.uid, gid: command.gid }),
      });
      server.on('error', () => {}); // a spawn failure shows as the exit below
      this.#server = server;
      this.#output = tailOf(server);
      if (await this.#waitUntilReady(port)) {
        this.port = port;
        return;
      }
      await this.stopServer();
      const output = this.#output();
      // Another process may have taken the free port between the check and the bind: try another.
      if (this.port === 0 && attempt < 3 && /could not (bind|create listen)/i.test(output)) continue;
      throw new Error(`postgres did not start on port ${port}:\n${output}`);
    }
  }

  async #waitUntilReady(port: number): Promise<boolean> {
    const startedAt = Date.now();
    while (Date.now() - startedAt < startTimeoutMs) {
      if (this.pid === undefined) return false;
      const client = new pg.Client({ host: '127.0.0.1', port, user: superuser, database: 'postgres' });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.end();
        return true;
      } catch {
        await client.end().catch(() => {});
        await sleep(50);
      }
    }
    return false;
  }

  /** A connection string for `database` (default `postgres`). */
  connectionString(database = 'postgres'): string {
    return `postgresql://${superuser}@127.0.0.1:${this.port}/${database}`;
  }

  /** Runs SQL as the superuser in `database`. */
  async sql(text: string, values: readonly unknown[] = [], database = 'postgres'): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: this.connectionString(database) });
    client.on('error', () => {});
    await client.connect();
    try {
      return await client.query(text, [...values]);
    } finally {
      await client.end();
    }
  }

  /** Creates an empty database and returns its connection string. */
  async createDatabase(prefix = 'ghost_test'): Promise<string> {
    this.#databases += 1;
    const name = `${prefix}_${process.pid}_${this.#databases}`;
    await this.sql(`CREATE DATABASE ${name}`);
    return this.connectionString(name);
  }

  /** Stops the server (fast shutdown, then immediate, then SIGKILL), keeping its data. */
  async stopServer(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    for (const signal of ['SIGINT', 'SIGQUIT', 'SIGKILL'] as const) {
      if (server.exitCode !== null || server.signalCode !== null) break;
      server.kill(signal);
      if (await exitWithin(server, stopTimeoutMs)) break;
    }
  }

  /** Stops the server and removes its folder. Safe to call more than once. */
  async destroy(): Promise<void> {
    if (this.#isDestroyed) return;
    this.#isDestroyed = true;
    await this.stopServer();
    await rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * Starts a throwaway cluster from this machine's PostgreSQL server binaries (`pg_config --bindir`,
 * `/usr/lib/postgresql/<version>/bin`, or `PATH`): `initdb` into a temporary folder, then `postgres`
 * on a free loopback port, as the `postgres` user (or 65534) when this process is root. It dies with
 * this process. Rejects, saying what to install, when no working server is found. Call `destroy()`.
 */
export async function startPostgresTestCluster(): Promise<PostgresTestCluster> {
  const availability = postgresAvailability();
  if (availability.state !== 'available') {
    throw new Error(`Cannot start a PostgreSQL test cluster: ${availability.reason}.`);
  }
  return PostgresTestCluster.start(availability.binaries);
}
