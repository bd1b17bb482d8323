import { describeEngineConformance } from '@ghost/code-mode/testing';
import { quickjsEngine } from './quickjs-engine.js';

describeEngineConformance({ engine: quickjsEngine, placement: 'thread' });
