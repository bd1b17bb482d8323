import { nodeProbe } from './node-probe.js';

/** How long a network attempt may wait before the probe counts it as not connected. */
const attemptMilliseconds = 3_000;

/** Connects to each address (`{ port, host }` or `{ path }`) and reports whether it connected. */
export function connectProbe(
  addresses: readonly ({ port: number; host: string } | { path: string })[],
): string {
  return nodeProbe(`
const net = require('node:net');
const connect = (address) => new Promise((resolve, reject) => {
  const socket = net.connect(address);
  const timer = setTimeout(() => { socket.destroy(); reject(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })); }, ${attemptMilliseconds});
  socket.once('connect', () => { clearTimeout(timer); socket.destroy(); resolve('connected'); });
  socket.once('error', (error) => { clearTimeout(timer); reject(error); });
});
const results = [];
for (const address of ${JSON.stringify(addresses)}) results.push(await attempt(() => connect(address)));
report(results);
`);
}

/**
 * Resolves a public name through the system resolver, and sends a DNS query straight to a UDP
 * port on the machine's loopback, where the suite listens, as an exfiltrating resolver would.
 */
export function dnsProbe(resolverPort: number): string {
  return nodeProbe(`
const dns = require('node:dns');
const withTimeout = (promise) => Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })), ${attemptMilliseconds}))]);
const lookup = await attempt(() => withTimeout(dns.promises.lookup('example.com')));
const resolver = new dns.promises.Resolver({ timeout: 1000, tries: 1 });
resolver.setServers(['127.0.0.1:' + ${resolverPort}]);
const query = await attempt(() => withTimeout(resolver.resolve4('ghost-testkit.example.com')));
report({ lookup, query });
`);
}
