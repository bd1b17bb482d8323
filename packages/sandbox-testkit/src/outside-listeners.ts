import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';

/** A server the suite starts outside the sandbox, to see whether anything in the sandbox reached it. */
export interface OutsideListener {
  /** How many connections (stream) or datagrams (UDP) arrived so far. */
  readonly arrivals: number;
  close(): Promise<void>;
}

/** A TCP or `AF_UNIX` stream server: listens on `127.0.0.1:0`, a socket path, or an abstract name (`\0...`). */
export async function listenForStreams(
  where: { readonly port: 0 } | { readonly path: string },
): Promise<OutsideListener & { readonly port: number }> {
  let arrivals = 0;
  const server: Server = createServer((socket) => {
    arrivals += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('path' in where) server.listen(where.path, resolve);
    else server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  return {
    get arrivals() {
      return arrivals;
    },
    port: typeof address === 'object' && address !== null ? address.port : 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A UDP socket on `127.0.0.1`, standing in for a DNS server a query could leak to. */
export async function listenForDatagrams(): Promise<OutsideListener & { readonly port: number }> {
  let arrivals = 0;
  const socket = createSocket('udp4');
  socket.on('message', () => {
    arrivals += 1;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', resolve);
  });
  return {
    get arrivals() {
      return arrivals;
    },
    port: socket.address().port,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
