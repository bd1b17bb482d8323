/**
 * The watchdog between Ghost and a stdio MCP server, run as
 * `node -e <source> -- <cgroup> command ...args`. It starts the server in a process group of its
 * own, with the same stdin, stdout and stderr (so messages do not pass through it), and holds a
 * pipe from the parent on fd 3. When that pipe ends (the parent closed it, exited or was killed,
 * even with SIGKILL), when the launcher is asked to stop, or when the server exits, it ends
 * everything the server started: SIGTERM, then SIGKILL after a grace period (at once when the
 * server has exited). So a server, and anything it started, never outlives the application.
 *
 * What "everything" is: with a cgroup directory (`<cgroup>`, made by the parent; empty for none)
 * the server is forked inside it, so every process it starts is a member whatever it does
 * (`setsid`, a daemon's double fork), and the watchdog leaves the cgroup at once. Without one, it
 * is the server's process group and every descendant found through parent pids when the end
 * begins, even one that left the group; a process that left the group and whose parent had
 * already exited is then out of reach.
 */
export const stdioLauncherSource = String.raw`
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { readdirSync, readFileSync, rmdirSync, writeFileSync } = require('node:fs');
const { Socket } = require('node:net');
const { dirname } = require('node:path');
const [cgroupArgument, command, ...args] = process.argv.slice(1); // with -e, argv has no script path
const cgroup = cgroupArgument === '' ? undefined : cgroupArgument;
const graceMs = 2000;
const settleMs = 5000;
let exitCode = null;

const moveTo = (directory) => {
  try {
    writeFileSync(directory + '/cgroup.procs', String(process.pid));
    return true;
  } catch {
    return false;
  }
};
// Forked inside the cgroup, the server is a member from its first instruction; the watchdog leaves.
let isWatchdogInCgroup = cgroup !== undefined && moveTo(cgroup);
let server;
try {
  server = spawn(command, args, { stdio: 'inherit', detached: true, env: process.env });
} finally {
  if (isWatchdogInCgroup && moveTo(dirname(cgroup))) isWatchdogInCgroup = false;
}
const groupId = server.pid;

const signal = (target, name) => {
  try { process.kill(target, name); } catch {}
};
const cgroupMembers = () => {
  if (cgroup === undefined) return [];
  try {
    return readFileSync(cgroup + '/cgroup.procs', 'utf8').split('\n').filter(Boolean).map(Number)
      .filter((pid) => pid !== process.pid);
  } catch {
    return [];
  }
};
/** Every process as [pid, parent pid, process group]: from /proc on Linux, else from ps. */
const listProcesses = () => {
  const listed = [];
  try {
    if (process.platform === 'linux') {
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        let stat;
        try { stat = readFileSync('/proc/' + entry + '/stat', 'utf8'); } catch { continue; }
        // The command name may hold spaces and parentheses: the fields follow the last ')'.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (fields[0] !== 'Z') listed.push([Number(entry), Number(fields[1]), Number(fields[2])]);
      }
    } else {
      const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], { encoding: 'utf8' });
      for (const line of text.split('\n')) {
        const [pid, parent, group, state = ''] = line.trim().split(/\s+/);
        if (pid !== undefined && !state.startsWith('Z')) listed.push([Number(pid), Number(parent), Number(group)]);
      }
    }
  } catch {}
  return listed;
};
/** Descendants outside the server's group, found while their parents live, kept until the end. */
let outsiders = new Set();
const findOutsiders = () => {
  if (cgroup !== undefined || groupId === undefined) return;
  const listed = listProcesses();
  const members = new Set(listed.filter(([pid, , group]) => group === groupId || outsiders.has(pid)).map(([pid]) => pid));
  members.add(groupId);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of listed) {
      if (!members.has(pid) && members.has(parent)) { members.add(pid); grew = true; }
    }
  }
  outsiders = new Set(listed.filter(([pid, , group]) => members.has(pid) && group !== groupId).map(([pid]) => pid));
};
const signalAll = (name) => {
  if (groupId !== undefined) signal(-groupId, name);
  for (const pid of outsiders) signal(pid, name);
  for (const pid of cgroupMembers()) signal(pid, name);
};

let isEnding = false;
const end = async (code) => {
  if (isEnding) return;
  isEnding = true;
  findOutsiders();
  signalAll('SIGKILL');
  if (cgroup !== undefined) {
    // rmdir is retried too: a cgroup whose last member has just exited can still be busy for a
    // moment, and on a loaded machine that moment outlasted a single attempt.
    const until = Date.now() + settleMs;
    for (;;) {
      if (cgroupMembers().length === 0) {
        try { rmdirSync(cgroup); break; } catch (error) { if (error.code === 'ENOENT') break; }
      }
      if (Date.now() >= until) break;
      if (!isWatchdogInCgroup) { try { writeFileSync(cgroup + '/cgroup.kill', '1', { flag: 'r+' }); } catch {} }
      signalAll('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  process.exit(code);
};
let isStopping = false;
const stop = () => {
  if (isStopping) return;
  isStopping = true;
  findOutsiders();
  signalAll('SIGTERM');
  setTimeout(() => { void end(exitCode ?? 143); }, graceMs).unref();
};
server.on('error', (error) => {
  process.stderr.write('ghost-mcp: cannot start ' + command + ': ' + error.message + '\n');
  void end(127);
});
server.on('exit', (code, name) => {
  exitCode = code ?? (name ? 128 : 1);
  void end(exitCode);
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
