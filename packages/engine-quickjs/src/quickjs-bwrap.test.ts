import { describeEngineConformance } from '@ghost/code-mode/testing';
import { quickjsEngine } from './quickjs-engine.js';

// The engine layer and the OS layer together: every conformance case in the bubblewrap sandbox.
describeEngineConformance({ engine: quickjsEngine, sandbox: 'bwrap' });
