import { describeEngineConformance } from '@ghost/code-mode/testing';
import { v8Engine } from './v8-engine.js';

describeEngineConformance({ engine: v8Engine });
