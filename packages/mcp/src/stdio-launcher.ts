/**
 * The watchdog between Ghost and a stdio MCP server, run as `node -e <source> -- command ...args`.
 * It starts the server in a process group of its own, with the same stdin, stdout and stderr
 * (so messages do not pass through it), and holds a pipe from the parent on fd 3. When that pipe
 * ends (the parent closed it, exited or was killed, even with SIGKILL) or the launcher is asked to
 * stop, it ends the server's whole process group: SIGTERM, then SIGKILL after a grace period. So
 * a server, and anything it started, never outlives the application that started it.
 */
export const stdioLauncherSource = String.raw`
'use strict';
const { spawn } = require('node:child_process');
const { Socket } = require('node:net');
const [command, ...args] = process.argv.slice(1); // with -e, argv has no script path
const graceMs = 2000;
let exitCode = null;
const server = spawn(command, args, { stdio: 'inherit', detached: true, env: process.env });
const signalGroup = (signal) => {
  try { process.kill(-server.pid, signal); } catch {}
};
let isStopping = false;
const stop = () => {
  if (isStopping) return;
  isStopping = true;
  signalGroup('SIGTERM');
  setTimeout(() => { signalGroup('SIGKILL'); process.exit(exitCode ?? 143); }, graceMs).unref();
};
server.on('error', (error) => {
  process.stderr.write('ghost-mcp: cannot start ' + command + ': ' + error.message + '\n');
  process.exit(127);
});
server.on('exit', (code, signal) => {
  exitCode = code ?? (signal ? 128 : 1);
  signalGroup('SIGKILL');
  process.exit(exitCode);
});
// A socket, not fs.createReadStream: a blocking read in the thread pool would hold up exit.
const parent = new Socket({ fd: 3, readable: true, writable: false });
parent.on('data', () => {});
parent.on('end', stop);
parent.on('close', stop);
parent.on('error', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('SIGHUP', stop);
`;
