import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineEngine, type EngineV1 } from '../engine.js';
import { hostLimits } from '../parent/host-engine.js';
import { launchProcessHost } from '../parent/host-link.js';
import { HostSession } from '../parent/host-session.js';
import { nodePermissionFlag } from '../parent/node-permission-flag.js';
import { protocolVersion } from '../shared/protocol.js';

/**
 * A value in a forged frame. Plain JSON is sent as it is, with these replacements:
 * - `'$programId'`: the id of the program the parent sent last;
 * - `'$index'`: inside `$many`, the item's position, as a string;
 * - `'$received'`: a summary of every frame the parent sent so far (`type`, `bytes`, and for
 *   `tool_results` each result's `callId`, `ok`, `error` and `valueBytes`);
 * - `{ $repeat: 'x', times: 1e6 }`: the string repeated;
 * - `{ $many: 1e6, each: template }`: an array of that many items;
 * - `{ $nest: 1e6, inner? }`: the value inside that many arrays.
 *
 * Templates are rendered as JSON text, so a frame nested a million levels deep costs the host no
 * recursion.
 */
export type HostileTemplate =
  | null
  | boolean
  | number
  | string
  | readonly HostileTemplate[]
  | { readonly $repeat: string; readonly times: number }
  | { readonly $many: number; readonly each: HostileTemplate }
  | { readonly $nest: number; readonly inner?: HostileTemplate }
  | { readonly [key: string]: HostileTemplate };

/** One step a hostile host plays, in order; after the last it stays alive until it is killed. */
export type HostileStep =
  /** Sends a well-framed frame (`times` times, as fast as the parent reads). */
  | { readonly send: HostileTemplate; readonly times?: number }
  /** Sends this text as a frame body with a correct length header: invalid JSON, an array, ... */
  | { readonly sendBody: string; readonly times?: number }
  /** Sends a bare length header that declares this many bytes, and nothing after it. */
  | { readonly sendHeader: number }
  /** Waits until the parent has sent this many frames of the type (or results, for `tool_results`). */
  | {
      readonly await: 'setup' | 'execute' | 'tool_results' | 'stop';
      readonly frames?: number;
      readonly results?: number;
    }
  /** Stops reading what the parent sends, so it piles up on the parent's side. */
  | { readonly stopReading: true }
  /** Exits with this status. */
  | { readonly exit: number };

/** The handshake of a well-behaved host, up to the program: hello, setup, ready, execute. */
export const hostileHandshake: readonly HostileStep[] = Object.freeze([
  { send: { type: 'hello', protocol: protocolVersion, engine: 'hostile-host' } },
  { await: 'setup' },
  { send: { type: 'ready' } },
  { await: 'execute' },
]);

/** The options of {@link hostileHostEngine}. */
export interface HostileHostOptions {
  /** How long a host may take to say `ready`. Default: code mode's own (30 s). */
  readonly startTimeoutMs?: number;
  /** How many bytes may wait unread for a host before it is lost. Default: code mode's own (128 MiB). */
  readonly unreadBytesLimit?: number;
}

// The script runs as plain Node, so it is the built file, from source and from dist alike.
const hostScript = fileURLToPath(new URL('../../dist/testing/hostile-host-script.js', import.meta.url));
const hostDirectory = dirname(hostScript);

/**
 * An engine whose host is forged: a real child process, started through the session's sandbox,
 * that speaks the fd-3 frame format and plays `steps` instead of running programs. Every host
 * the session starts plays the same steps. It exercises the parent's real path (sandbox, link,
 * session, broker, tool pipeline) against a compromised host, so a test can check what code mode
 * promises for one: the program ends with an error the model can read, the parent neither
 * crashes nor grows without bound, and nothing is left running.
 *
 * The steps travel as the host's command-line argument: keep them under 100 kB (use templates
 * such as `$repeat` and `$many` for large frames). The package must be built (`pnpm build`),
 * since the host script runs from `dist/`.
 *
 * @example
 * ```ts
 * const engine = hostileHostEngine([
 *   ...hostileHandshake,
 *   { send: { type: 'tool_calls', programId: '$programId', calls: [call, call] } }, // a reused call id
 * ]);
 * const { session, close } = await openCodeModeSession({ engine, sandbox: 'unrestricted', tools });
 * const result = await session.execute('1'); // { status: 'error', error: 'The engine host broke the protocol: ...' }
 * await close();
 * ```
 */
export function hostileHostEngine(steps: readonly HostileStep[], options: HostileHostOptions = {}): EngineV1 {
  const stepsArgument = JSON.stringify(steps);
  return defineEngine({
    name: 'hostile-host',
    language: 'javascript',
    runtimePaths: [hostDirectory],
    placements: ['process'],
    instructions: () => 'A forged engine host for tests; it runs no program.',
    open: (context) => {
      const tools = context.catalog.toJSON();
      const limits = hostLimits(context);
      return new HostSession({
        broker: context.broker,
        limits: context.limits,
        observationWindowMs: context.observationWindowMs,
        prewarm: context.prewarm,
        launch: () =>
          launchProcessHost({
            sandbox: context.sandbox,
            engine: 'hostile-host',
            tools,
            limits,
            command: {
              command: process.execPath,
              args: [
                nodePermissionFlag(),
                `--allow-fs-read=${hostDirectory}`,
                '--no-warnings',
                hostScript,
                stepsArgument,
              ],
              runtimePaths: [hostDirectory],
            },
            ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
            ...(options.unreadBytesLimit === undefined ? {} : { unreadBytesLimit: options.unreadBytesLimit }),
          }),
      });
    },
  });
}
