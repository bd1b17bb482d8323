import { fileURLToPath } from 'node:url';

// From src/ (tests) and from dist/ alike: both sit one level below the package root.
const packageFile = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The host script (a plain `node` cannot run TypeScript sources, so always the build's bundle). */
export const hostScript = packageFile('dist/host.cjs');

/**
 * QuickJS's wasm runs on V8's baseline compiler (Liftoff) only. With dynamic tiering V8 recompiles
 * a hot function with its optimising compiler, and QuickJS's interpreter function is so large that
 * it counts as hot after about a hundred tool calls even at the highest budget V8 accepts: every
 * fresh host that served such a program paid that compile (several times the CPU of the calls
 * around it) and never lived long enough to profit. Tool round trips, short programs and session
 * hosts measure the same or better without it; a program computing for seconds runs slower (see
 * docs/decisions/2026-12-05-fresh-host-round-trip.md).
 */
export const hostV8Options = Object.freeze(['--liftoff-only']);
