import { readFile } from 'node:fs/promises';
import { isIPv4 } from 'node:net';
import { endianness } from 'node:os';

/** The ends of one TCP connection as the server sees them. */
export interface ConnectionEnds {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
}

/**
 * Who a client connection comes from, for limits per client: on Linux, a connection from this
 * machine is its user (`user 1000`), read from the kernel's socket table (`/proc/net/tcp`): every
 * local program has the same address, and any of them may bind another loopback address, so only
 * the user tells two apart. Any other connection is its address (`address 192.0.2.7`).
 */
export async function clientIdentity(connection: ConnectionEnds): Promise<string> {
  const remote = canonicalAddress(connection.remoteAddress ?? '');
  if (process.platform === 'linux' && isLoopback(remote)) {
    const uid = await localPeerUid(connection);
    if (uid !== undefined) return `user ${uid}`;
  }
  return `address ${remote}`;
}

/** The uid owning the client's end of a local connection, from /proc/net/tcp and tcp6. */
async function localPeerUid(connection: ConnectionEnds): Promise<number | undefined> {
  const { remotePort, localPort } = connection;
  if (remotePort === undefined || localPort === undefined) return undefined;
  const remote = canonicalAddress(connection.remoteAddress ?? '');
  const local = canonicalAddress(connection.localAddress ?? '');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      // "  2: 0100007F:9879 0100007F:DEC8 01 00000000:00000000 00:00000000 00000000  1000 ..."
      const fields = line.trim().split(/\s+/);
      const [, ownEnd, otherEnd, , , , , uid] = fields;
      if (ownEnd === undefined || otherEnd === undefined || uid === undefined) continue;
      // The client's socket: its own end is the connection's remote end, its other end ours.
      if (sameEnd(ownEnd, remote, remotePort) && sameEnd(otherEnd, local, localPort) && /^\d+$/.test(uid)) {
        return Number(uid);
      }
    }
  }
  return undefined;
}

/** Whether a /proc/net/tcp end (`0100007F:1F90`) is `address`:`port`. */
function sameEnd(end: string, address: string, port: number): boolean {
  const [hexAddress, hexPort] = end.split(':');
  if (hexAddress === undefined || hexPort === undefined) return false;
  return Number.parseInt(hexPort, 16) === port && addressFromProc(hexAddress) === address;
}

/**
 * A /proc/net/tcp address in the canonical form of {@link canonicalAddress}. The kernel prints
 * each 32-bit word in this machine's byte order: `0100007F` is 127.0.0.1 on little-endian ones.
 */
function addressFromProc(hex: string): string | undefined {
  if (!/^([0-9A-Fa-f]{8}){1,4}$/.test(hex) || (hex.length !== 8 && hex.length !== 32)) return undefined;
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const wordBytes = Buffer.from(hex.slice(word, word + 8), 'hex');
    if (endianness() === 'LE') wordBytes.reverse();
    bytes.push(...wordBytes);
  }
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) {
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  }
  return canonicalAddress(groups.join(':'));
}

/**
 * One spelling per address: IPv4 dotted, an IPv4-mapped IPv6 address as its IPv4 address, other
 * IPv6 addresses as the WHATWG URL parser writes them (`::1`).
 */
function canonicalAddress(address: string): string {
  if (isIPv4(address)) return address;
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const high = Number.parseInt(mapped[1] ?? '0', 16);
    const low = Number.parseInt(mapped[2] ?? '0', 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return canonical;
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}
