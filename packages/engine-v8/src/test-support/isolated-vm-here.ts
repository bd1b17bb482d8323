import { fileURLToPath } from 'node:url';
import { isolatedVmProblem } from '../isolated-vm-check.js';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Why the isolated-vm this workspace installs cannot run the engine on this Node.js, or
 * `undefined` when it can. The workspace builds it for the machine's Node 20; the suite's pass on
 * the current LTS (docs/testing.md) finds it refused, as users would, and skips what needs it.
 */
export const isolatedVmHereProblem: string | undefined = await isolatedVmProblem(packageRoot);

/** `title`, saying why it is skipped when isolated-vm cannot run here. */
export function needingIsolatedVm(title: string): string {
  if (isolatedVmHereProblem === undefined) return title;
  return `${title} (skipped: this workspace's isolated-vm does not run on Node.js ${process.version}; isolated-vm-check.test.ts checks the engine says which to install)`;
}
