import type { Readable } from 'node:stream';

/** Reads from `stream` until `byteCount` bytes arrived; rejects when it ends or fails first. */
export function readBytes(stream: Readable, byteCount: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error?: Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      if (error === undefined) resolve(Buffer.concat(chunks).subarray(0, byteCount));
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.byteLength;
      if (received >= byteCount) finish();
    };
    const onEnd = () => finish(new Error(`The stream ended after ${received} of ${byteCount} bytes.`));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', finish);
  });
}

/** Reads one line from `stream`, without its newline. */
export function readLine(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const finish = (error?: Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      if (error === undefined) resolve(received.slice(0, received.indexOf('\n')));
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.includes('\n')) finish();
    };
    const onEnd = () =>
      finish(new Error(`The stream ended before a full line: ${JSON.stringify(received)}.`));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', finish);
  });
}
