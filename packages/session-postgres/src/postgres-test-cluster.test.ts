import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decidePostgresAvailability,
  findSetpriv,
  postgresAvailability,
} from './testing/postgres-binaries.js';
import { PostgresTestCluster, processTree } from './testing/postgres-test-cluster.js';

// The harness the other test files use: it must never leave a server or a folder behind.
const availability = postgresAvailability();
const skip = availability.state === 'skip' ? ` (skipped: ${availability.reason})` : '';

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function gone(pids: readonly number[], withinMs: number): Promise<boolean> {
  const startedAt = Date.now();
  while (Date.now() - startedAt < withinMs) {
    const alive = await Promise.all(pids.map(async (pid) => (await processTree(pid)).length > 0));
    if (!alive.includes(true)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe(`the PostgreSQL test cluster${skip}`, () => {
  const clusters: PostgresTestCluster[] = [];
  afterEach(async () => {
    for (const cluster of clusters.splice(0)) await cluster.destroy();
  });

  async function startCluster(): Promise<PostgresTestCluster> {
    if (availability.state !== 'available') throw new Error(availability.reason);
    const cluster = await PostgresTestCluster.start(availability.binaries);
    clusters.push(cluster);
    return cluster;
  }

  it.skipIf(availability.state === 'skip')(
    'runs as an unprivileged user, and destroy() ends the server and its backends and removes the folder',
    async () => {
      const cluster = await startCluster();
      const client = new pg.Client({ connectionString: await cluster.createDatabase() });
      client.on('error', () => {});
      await client.connect();
      const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
      expect(rows[0]?.user).toBe('ghost');
      const tree = await processTree(cluster.pid ?? -1);
      expect(tree.length).toBeGreaterThan(2); // the postmaster, its helpers and this client's backend
      if (process.getuid?.() === 0) {
        const status = await readFile(`/proc/${cluster.pid}/status`, 'utf8');
        expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).not.toBe('0');
      }
      await cluster.destroy();
      await client.end().catch(() => {});
      expect(await gone(tree, 5_000)).toBe(true);
      expect(await exists(cluster.directory)).toBe(false);
    },
  );

  it.skipIf(availability.state === 'skip' || findSetpriv() === undefined)(
    `takes the server down with the process that started it, even when that process is killed${findSetpriv() === undefined ? ' (skipped: no setpriv here to set the parent-death signal)' : ''}`,
    async () => {
      const cluster = await startCluster();
      const port = cluster.port;
      await cluster.stopServer();
      // A stand-in for a test runner: starts the server with the harness's command, then is killed.
      const command = cluster.serverCommand(port);
      const runner = spawn(
        process.execPath,
        [
          '-e',
          `const { spawn } = require('node:child_process');
           const [command, args, uid, gid] = JSON.parse(process.argv[1]);
           const server = spawn(command, args, { stdio: 'ignore', ...(uid === null ? {} : { uid, gid }) });
           console.log(server.pid);
           setInterval(() => {}, 1000);`,
          JSON.stringify([command.command, command.args, command.uid ?? null, command.gid ?? null]),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const [line] = (await once(runner.stdout!, 'data')) as [Buffer];
      const serverPid = Number(line.toString().trim());
      // Wait until it serves, so its helper processes exist too.
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const client = new pg.Client({ host: '127.0.0.1', port, user: 'ghost', database: 'postgres' });
        client.on('error', () => {});
        const isUp = await client.connect().then(
          () => true,
          () => false,
        );
        await client.end().catch(() => {});
        if (isUp) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const tree = await processTree(serverPid);
      expect(tree.length).toBeGreaterThan(1);
      runner.kill('SIGKILL');
      await once(runner, 'exit');
      expect(await gone(tree, 10_000)).toBe(true);
    },
  );
});

describe('when the PostgreSQL tests run, skip or fail', () => {
  const binaries = { bindir: '/usr/lib/postgresql/15/bin', version: 'postgres (PostgreSQL) 15.18' };
  const linuxRoot = { platform: 'linux', binaries: undefined, isRoot: true, hasAptGet: true } as const;

  it('runs wherever a working server is found', () => {
    expect(decidePostgresAvailability({ ...linuxRoot, binaries }).state).toBe('available');
    expect(decidePostgresAvailability({ ...linuxRoot, binaries, isRoot: false }).state).toBe('available');
  });

  it('fails, saying to run npm run setup, on a Linux root machine with apt-get and no server', () => {
    const decision = decidePostgresAvailability(linuxRoot);
    expect(decision.state).toBe('missing');
    expect(decision.state === 'missing' && decision.reason).toContain('npm run setup');
  });

  it('skips, saying why, only where setup could not have installed it', () => {
    for (const [facts, why] of [
      [{ ...linuxRoot, platform: 'darwin' }, 'not Linux'],
      [{ ...linuxRoot, isRoot: false }, 'not root'],
      [{ ...linuxRoot, hasAptGet: false }, 'no apt-get'],
    ] as const) {
      const decision = decidePostgresAvailability(facts);
      expect(decision.state).toBe('skip');
      expect(decision.state === 'skip' && decision.reason).toContain(why);
    }
  });
});
