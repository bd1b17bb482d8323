import { nodeProbe } from './node-probe.js';

/** Reports what the process received: its arguments, environment and working directory. */
export const processReportProbe = nodeProbe(`
report({ argv: process.argv.slice(1), execArgv: process.execArgv, env: process.env, cwd: process.cwd() });
`);

/** Echoes every byte it reads on fd 3 back on fd 3, until the parent ends the stream. */
export const echoChannelProbe = nodeProbe(`
const { Socket } = require('node:net');
const channel = new Socket({ fd: 3, readable: true, writable: true });
channel.pipe(channel);
`);

/** Writes `fd <n>` on each extra descriptor, reads one line back on each, then reports what it read. */
export function greetChannelsProbe(count: number): string {
  return nodeProbe(`
const { Socket } = require('node:net');
const replies = await Promise.all(Array.from({ length: ${count} }, (_, index) => new Promise((resolve, reject) => {
  const channel = new Socket({ fd: 3 + index, readable: true, writable: true });
  let received = '';
  channel.on('data', (chunk) => {
    received += chunk;
    if (received.includes('\\n')) {
      resolve(received.trim());
      channel.end();
    }
  });
  channel.on('error', reject);
  channel.write('fd ' + (3 + index) + '\\n');
})));
report({ replies });
`);
}

/** Writes `stdoutBytes` of 'o' to stdout and `stderrBytes` of 'e' to stderr, then exits. */
export function floodOutputProbe(stdoutBytes: number, stderrBytes: number): string {
  return nodeProbe(`
const { writeSync } = require('node:fs');
const write = (fd, character, total) => {
  const chunk = Buffer.alloc(64 * 1024, character);
  for (let left = total; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
};
write(1, 'o', ${stdoutBytes});
write(2, 'e', ${stderrBytes});
`);
}

/** Prints `ready` and then keeps running until it is killed (or for a minute). */
export const waitForeverProbe = nodeProbe(`
setTimeout(() => {}, 60_000);
process.stdout.write('ready\\n');
`);
