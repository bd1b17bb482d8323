import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { clientIdentity } from './client-identity.js';
import { otherUid, otherUserNode, otherUserSkipReason } from './test-support/other-user.js';

const isLinux = process.platform === 'linux';

/** The identity the server side of a real loopback connection from this process finds. */
async function identityOfOwnConnection(host: string): Promise<string> {
  const server = createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect((server.address() as AddressInfo).port, host);
  try {
    const [socket] = await accepted;
    return await clientIdentity(socket);
  } finally {
    client.destroy();
    server.close();
  }
}

describe('clientIdentity', () => {
  it.skipIf(!isLinux)(
    `names a connection from this machine by its user, over IPv4${isLinux ? '' : ' (skipped: the socket table is Linux only)'}`,
    async () => {
      expect(await identityOfOwnConnection('127.0.0.1')).toBe(`user ${process.getuid?.()}`);
    },
  );

  it.skipIf(!isLinux)(
    `and over IPv6${isLinux ? '' : ' (skipped: the socket table is Linux only)'}`,
    async () => {
      expect(await identityOfOwnConnection('::1')).toBe(`user ${process.getuid?.()}`);
    },
  );

  it.skipIf(!isLinux || otherUserNode === undefined)(
    `tells another user's connection apart from the server's own${isLinux ? otherUserSkipReason : ' (skipped: the socket table is Linux only)'}`,
    async () => {
      const server = createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const accepted = once(server, 'connection') as Promise<[Socket]>;
      const source = `require('node:net').connect(${(server.address() as AddressInfo).port}, '127.0.0.1'); setTimeout(() => {}, 20000);`;
      const client = spawn(otherUserNode as string, ['-e', source], {
        uid: otherUid,
        gid: otherUid,
        stdio: 'ignore',
      });
      try {
        const [socket] = await accepted;
        expect(await clientIdentity(socket)).toBe(`user ${otherUid}`);
      } finally {
        client.kill('SIGKILL');
        server.close();
      }
    },
  );

  it('names any other connection by its address, an IPv4-mapped one as IPv4', async () => {
    expect(await clientIdentity({ remoteAddress: '192.0.2.7', remotePort: 5000 })).toBe('address 192.0.2.7');
    expect(await clientIdentity({ remoteAddress: '::ffff:198.51.100.1', remotePort: 5000 })).toBe(
      'address 198.51.100.1',
    );
    expect(await clientIdentity({ remoteAddress: '2001:db8:0:0::1', remotePort: 5000 })).toBe(
      'address 2001:db8::1',
    );
  });
});
