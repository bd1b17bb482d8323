import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { outsideProcessIdentity, parseProcessIdentity } from './outside-process-identity.js';

describe('parseProcessIdentity', () => {
  it("reads the line in macOS's format (BSD ps, right-aligned) and procps's", () => {
    expect(parseProcessIdentity('  501   501   501    20    20\n')).toEqual({
      userIds: [501, 501, 501],
      groupIds: [20, 20],
    });
    expect(parseProcessIdentity('65534 65534 65534 65534 65534\n')).toEqual({
      userIds: [65534, 65534, 65534],
      groupIds: [65534, 65534],
    });
    expect(parseProcessIdentity('RUID UID\n')).toBeUndefined();
  });
});

describe('outsideProcessIdentity, with the real ps of this machine', () => {
  it("reports a child's real, effective and saved uid and its real and saved gid", async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await once(child, 'spawn');
      const uid = process.getuid?.();
      const gid = process.getgid?.();
      expect(await outsideProcessIdentity(child.pid ?? 0)).toEqual({
        userIds: [uid, uid, uid],
        groupIds: [gid, gid],
      });
    } finally {
      child.kill('SIGKILL');
    }
    await once(child, 'exit');
    // Reaped: ps finds no such process.
    expect(await outsideProcessIdentity(child.pid ?? 0)).toBeUndefined();
  });
});
