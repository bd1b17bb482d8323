import { describeEngineConformance } from '@ghost/code-mode/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { vmEngine } from './vm-engine.js';

// Every group of the conformance suite. node:vm cannot bound a guest's memory, so the engine
// declares no 'guest-memory-limit': unconfined, the memory-bomb case is skipped and says why.
describeEngineConformance({ engine: vmEngine });

// In bubblewrap the sandbox's memory limit ends a host whose guest grows too far, so there the
// memory bomb runs too, and every case passes. The backend object, not the name 'bwrap': the
// registry's lookup by name is tested in sandbox-bwrap.
describeEngineConformance({ engine: vmEngine, sandbox: bwrapSandbox });
