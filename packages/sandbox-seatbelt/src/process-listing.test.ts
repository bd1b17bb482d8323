import { describe, expect, it } from 'vitest';
import { listProcesses, parseListing } from './process-listing.js';

describe('parseListing', () => {
  it('reads pid, parent, group, resident KiB and zombie state, and skips lines of another shape', () => {
    const listing = [
      '    1     0     1 15040 Ss',
      '  812     1   812     0 Z',
      'garbage line',
      '  9  8  7  x S',
      '',
    ].join('\n');
    expect(parseListing(listing)).toEqual([
      { pid: 1, parentPid: 0, groupId: 1, residentBytes: 15040 * 1024, isZombie: false },
      { pid: 812, parentPid: 1, groupId: 812, residentBytes: 0, isZombie: true },
    ]);
  });
});

describe('listProcesses', () => {
  it('finds this process, its parent and its group with the real ps', async () => {
    const own = (await listProcesses()).find((listed) => listed.pid === process.pid);
    expect(own).toMatchObject({ parentPid: process.ppid, isZombie: false });
    expect(own!.residentBytes).toBeGreaterThan(0);
  });

  it('rejects when ps cannot run', async () => {
    await expect(listProcesses('/nonexistent/ps')).rejects.toThrow(/ENOENT/);
  });
});
