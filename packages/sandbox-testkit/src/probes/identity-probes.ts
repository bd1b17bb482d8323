import { nodeProbe } from './node-probe.js';

/**
 * Looks for `secret` everywhere the process could see its own or another process's environment:
 * `process.env`, `/proc/self/environ` and `/proc/1/environ`; also reports its environment and working directory.
 */
export function environmentProbe(secret: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const places = { 'process.env': JSON.stringify(process.env) };
for (const path of ['/proc/self/environ', '/proc/1/environ']) {
  try { places[path] = fs.readFileSync(path, 'latin1'); } catch (error) { places[path] = ''; }
}
const leakedIn = Object.keys(places).filter((place) => places[place].includes(${JSON.stringify(secret)}));
report({ env: process.env, cwd: process.cwd(), leakedIn });
`);
}

/**
 * Reports the privilege lines of `/proc/self/status`: no-new-privs, every capability set, the
 * seccomp mode, uids and gids.
 */
export const privilegesProbe = nodeProbe(`
const status = require('node:fs').readFileSync('/proc/self/status', 'utf8');
const field = (name) => (status.match(new RegExp('^' + name + ':\\\\s*(.*)$', 'm')) || [])[1];
report({
  noNewPrivs: field('NoNewPrivs'),
  capEff: field('CapEff'),
  capPrm: field('CapPrm'),
  capInh: field('CapInh'),
  capBnd: field('CapBnd'),
  capAmb: field('CapAmb'),
  seccomp: field('Seccomp'),
  uid: field('Uid'),
  gid: field('Gid'),
});
`);

/**
 * Reports who the process is, as it sees itself: the uid and gid lines of `/proc/self/status`,
 * its supplementary groups and its user namespace's uid and gid maps; where there is no /proc
 * (macOS), the real and effective ids and groups Node reports, and no maps. The report says
 * `ready`, and the process then stays alive so the suite can look at it from outside.
 */
export const identityProbe = nodeProbe(`
const fs = require('node:fs');
const read = (path) => { try { return fs.readFileSync(path, 'utf8'); } catch { return null; } };
const status = read('/proc/self/status');
const field = (name) => (status.match(new RegExp('^' + name + ':\\\\s*(.*)$', 'm')) || [])[1];
const identity = status === null
  ? { uid: process.getuid() + ' ' + process.geteuid(), gid: process.getgid() + ' ' + process.getegid(), groups: process.getgroups().join(' ') }
  : { uid: field('Uid'), gid: field('Gid'), groups: field('Groups') };
report({ ...identity, uidMap: read('/proc/self/uid_map'), gidMap: read('/proc/self/gid_map'), ready: true });
setTimeout(() => {}, 30000);
`);

/**
 * Reads the kernel setting at `path` (under /proc/sys) and tries to write it, set to its value
 * plus one; reports both attempts.
 */
export function sysctlWriteProbe(path: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const read = await attempt(() => fs.readFileSync(${JSON.stringify(path)}, 'utf8').trim());
const value = read.isAllowed ? String(Number(read.value) + 1) : '1';
const write = await attempt(() => fs.writeFileSync(${JSON.stringify(path)}, value));
report({ read, write });
`);
}

/**
 * Makes an executable file named `name` in its working directory (the workspace) and tries to
 * give it the set-user-id and set-group-id bits, as a program preparing an escalation for a user
 * outside would; reports each step.
 */
export function setuidFileProbe(name: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const create = await attempt(() => fs.writeFileSync(${JSON.stringify(name)}, '#!/bin/sh\\nid\\n', { mode: 0o755 }));
const setuid = await attempt(() => fs.chmodSync(${JSON.stringify(name)}, 0o4755));
const setgid = await attempt(() => fs.chmodSync(${JSON.stringify(name)}, 0o6755));
report({ create, setuid, setgid });
`);
}

/**
 * Finds the mount its working directory (the workspace) lives on, in `/proc/self/mountinfo`:
 * the one whose mount point is the longest prefix of the path; reports its mount point and
 * per-mount options.
 */
export const workspaceMountProbe = nodeProbe(`
const fs = require('node:fs');
const cwd = fs.realpathSync(process.cwd());
// Mount points escape space, tab, newline and backslash as octal.
const unescape = (text) => text.replace(/\\\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
let best;
for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n')) {
  const fields = line.split(' ');
  if (fields.length < 6) continue;
  const mountPoint = unescape(fields[4]);
  const contains = cwd === mountPoint || mountPoint === '/' || cwd.startsWith(mountPoint + '/');
  // Later lines are mounted on top of earlier ones at the same point.
  if (contains && (best === undefined || mountPoint.length >= best.mountPoint.length)) {
    best = { mountPoint, options: fields[5].split(',') };
  }
}
report({ cwd, mount: best });
`);

/**
 * Reports what the process can learn about the machine outside: the host name (null when denied),
 * the kernel command line, and the environments in `process.env`, `/proc/self/environ` and
 * `/proc/1/environ` (null where unreadable, as on macOS), its own and its pid namespace's init's,
 * which a backend starts.
 */
export const machineDetailsProbe = nodeProbe(`
const fs = require('node:fs');
const os = require('node:os');
const read = (path) => { try { return fs.readFileSync(path, 'latin1'); } catch { return null; } };
// In /proc's form, NUL after each entry, so one search fits all three.
const ownEnvironment = Object.entries(process.env).map(([name, value]) => name + '=' + value + '\\0').join('');
const environments = { 'process.env': ownEnvironment, '/proc/self/environ': read('/proc/self/environ'), '/proc/1/environ': read('/proc/1/environ') };
// A sandbox may deny the host name outright (seatbelt denies the sysctl), which Node throws for.
let hostname = null;
try { hostname = os.hostname(); } catch {}
report({ hostname, commandLine: read('/proc/cmdline'), environments });
`);

/**
 * A host of another session: keeps a secret, readable by everyone, in its workspace (its working
 * directory), says `ready` and stays alive, so the suite can check that nothing of a compromised
 * session reaches it.
 */
export function secretKeepingProbe(secret: string): string {
  return nodeProbe(`
require('node:fs').writeFileSync('secret', ${JSON.stringify(secret)}, { mode: 0o644 });
report({ ready: true });
setTimeout(() => {}, 30000);
`);
}
