import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { nodePermissionFlag } from './node-permission-flag.js';

describe('nodePermissionFlag', () => {
  it('names the flag each Node line knows', () => {
    expect(nodePermissionFlag('20.20.2')).toBe('--experimental-permission');
    expect(nodePermissionFlag('22.12.0')).toBe('--experimental-permission');
    expect(nodePermissionFlag('22.13.0')).toBe('--permission');
    expect(nodePermissionFlag('23.4.0')).toBe('--experimental-permission');
    expect(nodePermissionFlag('23.5.0')).toBe('--permission');
    expect(nodePermissionFlag('24.22.3')).toBe('--permission');
    expect(nodePermissionFlag('26.12.1')).toBe('--permission');
  });

  it('gives a flag this Node.js accepts, and under it the permission model refuses a read', () => {
    const script =
      "try { require('node:fs').readFileSync('/etc/hostname'); console.log('read') } catch (e) { console.log(e.code) }";
    const output = execFileSync(process.execPath, [nodePermissionFlag(), '-e', script], { encoding: 'utf8' });
    expect(output.trim()).toBe('ERR_ACCESS_DENIED');
  });
});
