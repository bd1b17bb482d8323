import { describeEngineConformance } from '@ghost/code-mode/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { pythonEngine } from './python-engine.js';

// Every conformance case that has a Python program, in bubblewrap (the engine's only home: its
// memory bound is the sandbox's). The backend object, not the name 'bwrap': the registry's lookup
// by name is tested in sandbox-bwrap.
describeEngineConformance({ engine: pythonEngine, sandbox: bwrapSandbox });
