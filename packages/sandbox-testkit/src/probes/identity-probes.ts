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

/** Reports the privilege lines of `/proc/self/status`: no-new-privs, capabilities, uids and gids. */
export const privilegesProbe = nodeProbe(`
const status = require('node:fs').readFileSync('/proc/self/status', 'utf8');
const field = (name) => (status.match(new RegExp('^' + name + ':\\\\s*(.*)$', 'm')) || [])[1];
report({ noNewPrivs: field('NoNewPrivs'), capEff: field('CapEff'), capPrm: field('CapPrm'), uid: field('Uid'), gid: field('Gid') });
`);
