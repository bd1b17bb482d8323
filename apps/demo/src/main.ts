import { runDemo } from './run-demo.js';

const outcome = await runDemo((text) => process.stdout.write(text));
process.exitCode = outcome === 'completed' ? 0 : 1;
