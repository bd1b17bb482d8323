import { runApprovalDemo } from './approval-demo.js';
import { runResearchAndWrite } from './research-and-write.js';
import { runDemo } from './run-demo.js';

const write = (text: string) => process.stdout.write(text);
const outcome = await runDemo(write);
const twoAgents = outcome === 'completed' ? await runResearchAndWrite(write) : 'not run';
const approval = twoAgents === 'completed' ? await runApprovalDemo(write) : 'not run';
process.exitCode = outcome === 'completed' && twoAgents === 'completed' && approval === 'completed' ? 0 : 1;
