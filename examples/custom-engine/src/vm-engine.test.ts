import { describeEngineConformance } from '@ghost/code-mode/testing';
import { it } from 'vitest';
import { vmEngine } from './vm-engine.js';

// The groups of the conformance suite this engine passes. It leaves two out, and says why below.
describeEngineConformance({
  engine: vmEngine,
  groups: ['guest-api', 'control-operations', 'in-an-agent', 'results-and-placement'],
});

it.skip("does not run the 'bad-programs' group: node:vm cannot bound a guest's memory, so its memory-bomb case fails (the sandbox's memory limit is what bounds this engine)", () => {});
it.skip("does not run the 'hosts-and-cleanup' group: its host-killed-from-outside case does not pass yet with this example's host", () => {});
