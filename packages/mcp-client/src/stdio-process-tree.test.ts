import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, test } from 'vitest';
import { type McpServerTools, mcpTools } from './index.js';
import { createServerCgroup, endServerCgroup } from './server-cgroup.js';
import { launcherSpawnPlan, StdioProcessTransport } from './stdio-process-transport.js';
import {
  directContext,
  newMarker,
  processesWith,
  testServerScript,
  waitUntilGone,
  waitUntilRunning,
} from './test-support/processes.js';

// Every case starts the real test server (the SDK's server classes) through the real watchdog,
// lets it start children that escape its process group, and checks with `ps` that nothing
// carrying the server's marker survives.

const probe = await createServerCgroup();
if (probe !== undefined) await endServerCgroup(probe, Date.now());
/** Whether this machine lets this process make cgroups (Linux, as root or in a delegated cgroup). */
const hasCgroups = probe !== undefined;
/** A case's name, saying why it is skipped where this process cannot make cgroups. */
const needingCgroups = (name: string) =>
  hasCgroups
    ? name
    : `${name} (skipped: needs a cgroup this process can make: Linux, as root or in a delegated cgroup)`;

const opened: McpServerTools[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

async function connect(marker: string, env: Record<string, string>): Promise<McpServerTools> {
  const server = await mcpTools({
    name: 'test',
    command: process.execPath,
    args: [testServerScript, marker],
    env,
  });
  opened.push(server);
  return server;
}

describe("a stdio server's detached children end with it", () => {
  test('close() ends a child that left the process group with setsid, and returns without waiting for its pipe', async () => {
    const marker = newMarker();
    const server = await connect(marker, { DETACH: 'setsid' });
    await waitUntilRunning(`${marker}-setsid`);
    await server.close();
    expect(processesWith(marker)).toEqual([]);
  });

  test.skipIf(!hasCgroups)(
    needingCgroups('close() ends a daemon that forked twice and was reparented away from the server'),
    async () => {
      const marker = newMarker();
      const server = await connect(marker, { DETACH: 'daemon' });
      await waitUntilRunning(`${marker}-daemon`);
      await server.close();
      expect(processesWith(marker)).toEqual([]);
    },
  );

  test.skipIf(!hasCgroups)(
    needingCgroups('a server that crashes leaves none of its detached children running'),
    async () => {
      const marker = newMarker();
      const server = await connect(marker, { DETACH: 'setsid' });
      await waitUntilRunning(`${marker}-setsid`);
      const crash = server.tools.find((tool) => tool.name === 'test_crash');
      await expect(crash?.execute({}, directContext())).rejects.toMatchObject({ code: 'MCP_SERVER_CLOSED' });
      await waitUntilGone(marker);
      expect(processesWith(marker)).toEqual([]);
    },
  );

  test.skipIf(!hasCgroups)(
    needingCgroups('close() ends the server and its children even when its watchdog was killed with SIGKILL'),
    async () => {
      const marker = newMarker();
      const transport = new StdioProcessTransport({
        command: process.execPath,
        args: [testServerScript, marker],
        env: { DETACH: 'setsid' },
        maxMessageBytes: 1_000_000,
      });
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(transport);
      await waitUntilRunning(`${marker}-setsid`);
      const cgroup = transport.cgroup as string;
      process.kill(transport.pid as number, 'SIGKILL');
      await client.close();
      await transport.close();
      expect(processesWith(marker)).toEqual([]);
      expect(existsSync(cgroup)).toBe(false);
    },
  );

  test('without a cgroup, close() still ends a setsid child, found through its parent', async () => {
    const marker = newMarker();
    const transport = new StdioProcessTransport({
      command: process.execPath,
      args: [testServerScript, marker],
      env: { DETACH: 'setsid' },
      maxMessageBytes: 1_000_000,
      isCgroupWanted: false,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    expect(transport.cgroup).toBeUndefined();
    await waitUntilRunning(`${marker}-setsid`);
    await client.close();
    await transport.close();
    expect(processesWith(marker)).toEqual([]);
  });
});

describe('when the application is killed with SIGKILL', () => {
  /** Starts the server as StdioProcessTransport does, from a parent process the test then kills. */
  async function killParentOf(marker: string, env: Record<string, string>, cgroup: string | undefined) {
    const plan = launcherSpawnPlan({
      command: process.execPath,
      args: [testServerScript, marker],
      env,
      ...(cgroup === undefined ? {} : { cgroup }),
    });
    const parentSource = `
      const { spawn } = require('node:child_process');
      const plan = JSON.parse(process.argv[1]);
      spawn(plan.command, plan.args, { env: plan.env, stdio: ['pipe', 'pipe', 'ignore', 'pipe'] });
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['-e', parentSource, JSON.stringify(plan)], { stdio: 'ignore' });
    const parentExited = new Promise((resolve) => parent.once('close', resolve));
    return {
      async kill() {
        parent.kill('SIGKILL');
        await parentExited;
      },
    };
  }

  test('the watchdog ends the server and a child that left its group with setsid', async () => {
    const marker = newMarker();
    const parent = await killParentOf(marker, { DETACH: 'setsid' }, undefined);
    await waitUntilRunning(`${marker}-setsid`);
    await parent.kill();
    await waitUntilGone(marker);
    expect(processesWith(marker)).toEqual([]);
  });

  test.skipIf(!hasCgroups)(
    needingCgroups("the watchdog ends a double-forked daemon, and removes the server's cgroup"),
    async () => {
      const marker = newMarker();
      const cgroup = (await createServerCgroup()) as string;
      const parent = await killParentOf(marker, { DETACH: 'daemon' }, cgroup);
      await waitUntilRunning(`${marker}-daemon`);
      await parent.kill();
      await waitUntilGone(marker);
      expect(processesWith(marker)).toEqual([]);
      for (let attempt = 0; attempt < 150 && existsSync(cgroup); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(existsSync(cgroup)).toBe(false);
    },
  );
});
