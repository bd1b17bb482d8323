import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { EngineV1 } from '@ghost/code-mode';
import { findIsolatedVm, isolatedVmProblem } from '../isolated-vm-check.js';
import { createV8Engine, v8Engine } from '../v8-engine.js';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The directory isolated-vm resolves from for these tests. The workspace builds its own for the
 * machine's Node 20; the suite's pass on the current LTS (docs/testing.md) runs under
 * `scripts/lts-node.mjs run`, which installs the isolated-vm for that Node.js in a cache folder and
 * names it in `GHOST_TEST_ISOLATED_VM_FROM`.
 */
const isolatedVmFrom = process.env.GHOST_TEST_ISOLATED_VM_FROM || packageRoot;

/** Why the isolated-vm these tests use cannot run the engine on this Node.js, or `undefined`. */
export const isolatedVmHereProblem: string | undefined = await isolatedVmProblem(isolatedVmFrom);

/**
 * The major version of the isolated-vm these tests use (0 when there is none). 7.x refuses some
 * allocations as over the heap limit that 5.x lets through into a V8 fatal error.
 */
export const isolatedVmHereMajor: number = Number(findIsolatedVm(isolatedVmFrom)?.version.split('.')[0] ?? 0);

/**
 * The V8 engine as the tests run it: {@link v8Engine} itself on the machine's Node.js, and an
 * engine whose preflight and host use the cached isolated-vm on the LTS pass.
 */
export const v8EngineHere: EngineV1 =
  isolatedVmFrom === packageRoot ? v8Engine : createV8Engine({ resolveFrom: isolatedVmFrom });

/**
 * The isolated-vm module the engine here loads, for tests that compare with a bare isolate.
 * Loaded when asked, not at import: on a Node.js it was not built for, the tests only skip.
 */
export function loadIsolatedVmHere(): typeof import('isolated-vm') {
  return createRequire(`${isolatedVmFrom}/`)('isolated-vm') as typeof import('isolated-vm');
}

/** `title`, saying why it is skipped when isolated-vm cannot run here. */
export function needingIsolatedVm(title: string): string {
  if (isolatedVmHereProblem === undefined) return title;
  return `${title} (skipped: no isolated-vm that runs on Node.js ${process.version} here: ${isolatedVmHereProblem})`;
}
