import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { listenForDatagrams, listenForStreams } from './outside-listeners.js';
import { connectProbe, dnsProbe } from './probes/network-probes.js';
import type { Attempt } from './probes/node-probe.js';

/** Connections that must not reach the machine's network or local services (`networkIsolation`, `network: 'none'`). */
export function networkEscapeCases(): ConformanceCase[] {
  return [
    escapeCase({
      title: "TCP connections to a server on the machine's 127.0.0.1 fail",
      needs: ['networkIsolation'],
      run: async (harness) => {
        const server = await listenForStreams({ port: 0 });
        harness.defer(() => server.close());
        const run = await harness.runNode(connectProbe([{ port: server.port, host: '127.0.0.1' }]));
        expect(harness.report<Attempt[]>(run), 'the probe connected').toEqual([
          expect.objectContaining({ isAllowed: false }),
        ]);
        expect(server.arrivals, 'connections the server outside accepted').toBe(0);
      },
    }),
    escapeCase({
      title: 'DNS lookups fail and no query reaches a resolver outside',
      needs: ['networkIsolation'],
      run: async (harness) => {
        const resolver = await listenForDatagrams();
        harness.defer(() => resolver.close());
        const run = await harness.runNode(dnsProbe(resolver.port));
        const report = harness.report<{ lookup: Attempt; query: Attempt }>(run);
        expect(report.lookup, 'the system resolver answered').toMatchObject({ isAllowed: false });
        expect(report.query, 'the resolver outside answered').toMatchObject({ isAllowed: false });
        expect(resolver.arrivals, 'datagrams the resolver outside received').toBe(0);
      },
    }),
    escapeCase({
      title: 'AF_UNIX connections to a socket file in a temp dir outside fail',
      needs: ['networkIsolation'],
      run: async (harness) => {
        const path = join(await harness.outsideDirectory(), 'outside.sock');
        const server = await listenForStreams({ path });
        harness.defer(() => server.close());
        const run = await harness.runNode(connectProbe([{ path }]));
        expect(harness.report<Attempt[]>(run), 'the probe connected').toEqual([
          expect.objectContaining({ isAllowed: false }),
        ]);
        expect(server.arrivals, 'connections the server outside accepted').toBe(0);
      },
    }),
    escapeCase({
      title: 'AF_UNIX connections to an abstract-namespace socket outside fail',
      needs: ['networkIsolation'],
      run: async (harness) => {
        // Abstract sockets have no file: only a network namespace separates them.
        const path = `\0ghost-testkit-${randomUUID()}`;
        const server = await listenForStreams({ path });
        harness.defer(() => server.close());
        const run = await harness.runNode(connectProbe([{ path }]));
        expect(harness.report<Attempt[]>(run), 'the probe connected').toEqual([
          expect.objectContaining({ isAllowed: false }),
        ]);
        expect(server.arrivals, 'connections the server outside accepted').toBe(0);
      },
    }),
  ];
}
