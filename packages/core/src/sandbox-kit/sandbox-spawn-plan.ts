import { isAbsolute, relative } from 'node:path';
import { ConfigurationError, SandboxUnavailableError } from '../errors.js';
import type { SandboxCapabilities, SandboxLimits, SandboxNetwork, SandboxSpawnSpec } from '../sandbox.js';

/** The largest `wallSeconds` a Node timer can wait; a larger delay would fire after 1 ms instead. */
const largestWallSeconds = Math.floor((2 ** 31 - 1) / 1_000);

/** The most extra pipes a process may ask for; far more than the protocol channel needs. */
const largestExtraFds = 64;

/** Each limit a backend may enforce, and the capability that says it does. */
const limitCapabilities = {
  memoryBytes: 'memoryLimit',
  cpuSeconds: 'cpuLimit',
  fileBytes: 'fileSizeLimit',
  openFiles: 'openFilesLimit',
  processes: 'processLimit',
} as const satisfies Partial<Record<keyof SandboxLimits, keyof SandboxCapabilities>>;

/** Every key of {@link SandboxLimits}, to reject a misspelt one rather than silently not apply it. */
const knownLimits: ReadonlySet<string> = new Set<keyof SandboxLimits>([
  ...(Object.keys(limitCapabilities) as (keyof typeof limitCapabilities)[]),
  'wallSeconds',
]);

/**
 * A {@link SandboxSpawnSpec} checked and normalised: every default applied, every part the backend
 * cannot enforce already rejected. Built by {@link planSandboxSpawn}.
 */
export interface SandboxSpawnPlan {
  /** The absolute path of the program. */
  readonly command: string;
  readonly args: readonly string[];
  /** The whole environment, a copy without a prototype so no inherited key can leak in. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute paths the process may read and execute. */
  readonly runtimePaths: readonly string[];
  /** The absolute path of the workspace, removed by `close()`. */
  readonly workspace: string;
  /** The working directory: `spec.cwd`, or the workspace when it was left out. */
  readonly cwd: string;
  readonly network: SandboxNetwork;
  readonly subprocesses: 'allow' | 'deny';
  /** How many pipes the process gets at fd 3 and on; at least 1, for the protocol channel. */
  readonly extraFds: number;
  /** The limits asked for, each a positive number; only ones the backend enforces. */
  readonly limits: SandboxLimits;
  /** Aborting it kills the process tree. */
  readonly signal: AbortSignal | undefined;
}

/** The backend a spec is planned for: its name for messages, and what it enforces here. */
export interface SandboxPlanTarget {
  readonly name: string;
  readonly capabilities: SandboxCapabilities;
}

/**
 * Checks a spawn spec for a backend without touching the system, and applies its defaults. Every
 * backend starts its `spawn` with it, so all of them reject the same malformed specs with the same
 * errors, and none silently ignores a part it cannot enforce. Whether the workspace exists is left
 * to `spawn`, which may do I/O.
 *
 * @throws ConfigurationError when the spec is malformed: a relative command, an argument or an
 *   environment value that is not a string, a relative workspace, a `cwd` outside the workspace
 *   and the runtime paths, an unknown limit key or a limit that is not a positive number.
 * @throws SandboxUnavailableError when the spec asks for what the backend's capabilities do not
 *   cover: `network: 'none'` (the default) without `networkIsolation`, `subprocesses: 'deny'`
 *   without `subprocessDenial`, or a limit without its capability (`memoryBytes` needs
 *   `memoryLimit`, and so on; `wallSeconds` every backend enforces).
 *
 * @example
 * ```ts
 * const plan = planSandboxSpawn(spec, { name: 'jail', capabilities: jailCapabilities });
 * plan.extraFds; // 1 unless the spec asked for more
 * ```
 */
export function planSandboxSpawn(spec: SandboxSpawnSpec, target: SandboxPlanTarget): SandboxSpawnPlan {
  if (typeof spec !== 'object' || spec === null) {
    throw new ConfigurationError(`The spawn spec must be an object, got ${formatValue(spec)}.`);
  }
  const command = requireAbsolutePath(spec.command, 'command');
  if (!Array.isArray(spec.args)) {
    throw new ConfigurationError(
      `The spawn spec's args must be an array of strings, got ${formatValue(spec.args)}.`,
    );
  }
  const args = spec.args.map((argument: unknown, index) => requireString(argument, `args[${index}]`));
  const env = planEnvironment(spec.env);
  if (!Array.isArray(spec.runtimePaths)) {
    throw new ConfigurationError(
      `The spawn spec's runtimePaths must be an array of absolute paths, got ${formatValue(spec.runtimePaths)}.`,
    );
  }
  const runtimePaths = spec.runtimePaths.map((path: unknown, index) =>
    requireAbsolutePath(path, `runtimePaths[${index}]`),
  );
  const workspace = requireAbsolutePath(spec.workspace, 'workspace');
  const cwd = spec.cwd === undefined ? workspace : requireAbsolutePath(spec.cwd, 'cwd');
  if (![workspace, ...runtimePaths].some((root) => isInside(cwd, root))) {
    throw new ConfigurationError(
      `The spawn spec's cwd ${cwd} is neither inside the workspace ${workspace} nor inside a runtime path. Use a directory in one of them.`,
      { option: 'cwd', path: cwd },
    );
  }
  const extraFds = spec.extraFds ?? 1;
  if (!Number.isInteger(extraFds) || extraFds < 1 || extraFds > largestExtraFds) {
    throw new ConfigurationError(
      `The spawn spec's extraFds must be an integer from 1 to ${largestExtraFds} (fd 3 carries the protocol channel), got ${formatValue(extraFds)}.`,
    );
  }
  if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal)) {
    throw new ConfigurationError(
      `The spawn spec's signal must be an AbortSignal, got ${formatValue(spec.signal)}.`,
    );
  }
  return {
    command,
    args,
    env,
    runtimePaths,
    workspace,
    cwd,
    network: planNetwork(spec.network, target),
    subprocesses: planSubprocesses(spec.subprocesses, target),
    extraFds,
    limits: planLimits(spec.limits, target),
    signal: spec.signal,
  };
}

function planNetwork(network: unknown, target: SandboxPlanTarget): SandboxNetwork {
  if (network === 'host') {
    throw new ConfigurationError(
      "The spawn spec's network 'host' is now called 'shared'; pass network: 'shared' to share the machine's network with the process.",
    );
  }
  if (network !== undefined && network !== 'none' && network !== 'shared') {
    throw new ConfigurationError(
      `The spawn spec's network must be 'none' or 'shared', got ${formatValue(network)}.`,
    );
  }
  if (network === 'shared') return 'shared';
  if (!target.capabilities.networkIsolation) {
    throw new SandboxUnavailableError(
      `The ${target.name} backend cannot isolate the network; pass network: 'shared' to acknowledge it, or use a sandbox backend that can isolate the network.`,
      { backend: target.name, unsupported: ['network'] },
    );
  }
  return 'none';
}

function planSubprocesses(subprocesses: unknown, target: SandboxPlanTarget): 'allow' | 'deny' {
  if (subprocesses === undefined || subprocesses === 'allow') return 'allow';
  if (subprocesses !== 'deny') {
    throw new ConfigurationError(
      `The spawn spec's subprocesses must be 'allow' or 'deny', got ${formatValue(subprocesses)}.`,
    );
  }
  if (!target.capabilities.subprocessDenial) {
    throw new SandboxUnavailableError(
      `The ${target.name} backend cannot deny subprocesses here; leave subprocesses out (or 'allow'), or use a sandbox backend that can deny them.`,
      { backend: target.name, unsupported: ['subprocesses'] },
    );
  }
  return 'deny';
}

/** Checks every limit, then refuses the ones the backend cannot enforce, all named at once. */
function planLimits(limits: unknown, target: SandboxPlanTarget): SandboxLimits {
  if (limits === undefined) return {};
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw new ConfigurationError(`The spawn spec's limits must be an object, got ${formatValue(limits)}.`);
  }
  const given = Object.entries(limits).filter(([, value]) => value !== undefined);
  const unknown = given.map(([key]) => key).filter((key) => !knownLimits.has(key));
  if (unknown.length > 0) {
    throw new ConfigurationError(
      `Unknown sandbox limit ${unknown.map((key) => JSON.stringify(key)).join(', ')}: use ${[...knownLimits].join(', ')}.`,
      { option: 'limits', known: [...knownLimits] },
    );
  }
  for (const [key, value] of given) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new ConfigurationError(
        `The sandbox limit ${key} must be a positive number, got ${formatValue(value)}.`,
      );
    }
  }
  const planned = Object.fromEntries(given) as SandboxLimits;
  const unenforceable = (Object.keys(limitCapabilities) as (keyof typeof limitCapabilities)[]).filter(
    (key) => planned[key] !== undefined && !target.capabilities[limitCapabilities[key]],
  );
  if (unenforceable.length > 0) {
    throw new SandboxUnavailableError(
      `The ${target.name} backend cannot enforce ${unenforceable.join(', ')} on this machine. Use a sandbox backend that can enforce them, or do not ask for them.`,
      { backend: target.name, unsupported: unenforceable },
    );
  }
  if (planned.wallSeconds !== undefined && planned.wallSeconds > largestWallSeconds) {
    throw new ConfigurationError(
      `The sandbox limit wallSeconds must be at most ${largestWallSeconds} (about 24 days), got ${planned.wallSeconds}.`,
    );
  }
  return planned;
}

/** Copies the environment into an object without a prototype, checking every name and value. */
function planEnvironment(env: unknown): Readonly<Record<string, string>> {
  if (typeof env !== 'object' || env === null || Array.isArray(env)) {
    throw new ConfigurationError(
      `The spawn spec's env must be an object of strings (the whole environment), got ${formatValue(env)}.`,
    );
  }
  // Node's spawn also copies inherited enumerable keys into the environment, so the copy has none.
  const copy: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw new ConfigurationError(
        `The environment variable name ${JSON.stringify(name)} is invalid: it must be non-empty, without '=' or NUL.`,
      );
    }
    copy[name] = requireString(value, `env.${name}`);
  }
  return copy;
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string') {
    throw new ConfigurationError(`The spawn spec's ${field} must be a string, got ${formatValue(value)}.`);
  }
  // A NUL byte cannot cross exec(); Node would throw a less specific error from spawn.
  if (value.includes('\0')) {
    throw new ConfigurationError(
      `The spawn spec's ${field} contains a NUL byte, which a process cannot receive.`,
    );
  }
  return value;
}

function requireAbsolutePath(value: unknown, field: string): string {
  const path = requireString(value, field);
  if (!isAbsolute(path)) {
    throw new ConfigurationError(
      `The spawn spec's ${field} must be an absolute path, got ${JSON.stringify(path)}.`,
    );
  }
  return path;
}

/** Whether `path` is `root` or inside it, by their names (no link is followed). */
export function isInside(path: string, root: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

function formatValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
