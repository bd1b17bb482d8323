import { isAbsolute } from 'node:path';
import type { SandboxCapabilities, SandboxCheck } from '@ghost/core/sandbox';
import { type BwrapEnvironment, bwrapCapabilities, detectBwrap, type StartProcess } from './bwrap-detect.js';
import { bwrapDetectionKey } from './bwrap-detection-key.js';
import type { BwrapSandboxOptions } from './bwrap-sandbox.js';
import { removeStaleSandboxCgroups } from './cgroups.js';
import { forgetDetectionCache, readDetectionCache, writeDetectionCache } from './detection-cache.js';

/** The cache entries' file name prefix in the cache directory. */
const cacheName = 'bwrap-detection';

/** A detection found in, or written to, the cache; `forget` removes the entry. */
export interface CachedBwrapEnvironment {
  readonly environment: BwrapEnvironment;
  /** Removes the entry this detection came from or went to, so the next process detects again. */
  forget(): Promise<void>;
}

/**
 * Detects bubblewrap (see `detectBwrap`), or takes the detection a process on this machine made
 * before under the same key (see `bwrapDetectionKey`): the proof that starts a real sandbox is
 * what makes detection cost, and its result holds until something it depends on changes. Only a
 * working sandbox is cached: a failure is detected again each time, so fixing it takes effect at
 * once. Without a `directory` there is no cache.
 */
export async function detectBwrapCached(
  options: BwrapSandboxOptions,
  start: StartProcess,
  directory: string | undefined,
): Promise<CachedBwrapEnvironment> {
  const key = directory === undefined ? undefined : await bwrapDetectionKey(options);
  if (directory === undefined || key === undefined) {
    return { environment: await detectBwrap(options, start), forget: async () => {} };
  }
  const forget = () => forgetDetectionCache(directory, cacheName, key);
  const cached = parseCachedEnvironment(await readDetectionCache(directory, cacheName, key));
  if (cached !== undefined) {
    // What a fresh detection would do besides the proof: clear cgroups crashed processes left.
    if (cached.cgroups !== undefined) await removeStaleSandboxCgroups(cached.cgroups);
    return { environment: cached, forget };
  }
  const environment = await detectBwrap(options, start);
  if (environment.detection.available) await writeDetectionCache(directory, cacheName, key, environment);
  return { environment, forget };
}

const capabilityNames = Object.keys(bwrapCapabilities(true)) as (keyof SandboxCapabilities)[];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isPath = (value: unknown): value is string =>
  typeof value === 'string' && isAbsolute(value) && !value.includes('\0');
const isId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 4_294_967_294;

/**
 * A cached entry checked field by field, or undefined. The file is this user's own (see
 * `readDetectionCache`), but it may be truncated, hand-edited or from an older Ghost: nothing
 * reaches `spawn` that does not have exactly the shape a detection produces.
 */
function parseCachedEnvironment(value: unknown): BwrapEnvironment | undefined {
  if (!isRecord(value)) return undefined;
  const { detection, tools, architecture, cgroups, identity } = value;
  if (!isRecord(detection) || detection.available !== true) return undefined;
  const { capabilities, checks } = detection;
  if (!isRecord(capabilities) || !capabilityNames.every((name) => typeof capabilities[name] === 'boolean')) {
    return undefined;
  }
  const isCheck = (check: unknown): check is SandboxCheck =>
    isRecord(check) &&
    typeof check.name === 'string' &&
    typeof check.detail === 'string' &&
    (check.status === 'enforced' || check.status === 'fallback' || check.status === 'missing');
  if (!Array.isArray(checks) || !checks.every(isCheck)) return undefined;
  if (!isRecord(tools) || !isPath(tools.bwrap) || !isPath(tools.bash) || !isPath(tools.prlimit))
    return undefined;
  if (architecture !== 'x64' && architecture !== 'arm64') return undefined;
  const parsedCgroups = parseCgroups(cgroups);
  if (parsedCgroups === null) return undefined;
  const parsedIdentity = parseIdentity(identity);
  if (parsedIdentity === undefined) return undefined;
  const capabilityValues = Object.fromEntries(
    capabilityNames.map((name) => [name, capabilities[name] as boolean]),
  ) as unknown as SandboxCapabilities;
  return {
    detection: {
      available: true,
      capabilities: capabilityValues,
      checks: checks.map((check) => ({ ...check })),
    },
    tools: { bwrap: tools.bwrap, bash: tools.bash, prlimit: tools.prlimit },
    architecture,
    identity: parsedIdentity,
    ...(parsedCgroups === undefined ? {} : { cgroups: parsedCgroups }),
  };
}

/** The cgroups of an entry; undefined when it has none, null when they are malformed. */
function parseCgroups(value: unknown): BwrapEnvironment['cgroups'] | null {
  if (value === undefined) return undefined;
  if (!isRecord(value) || (value.version !== 1 && value.version !== 2)) return null;
  const { memoryParent, pidsParent, problems } = value;
  if (memoryParent !== undefined && !isPath(memoryParent)) return null;
  if (pidsParent !== undefined && !isPath(pidsParent)) return null;
  if (!Array.isArray(problems) || !problems.every((problem) => typeof problem === 'string')) return null;
  return {
    version: value.version,
    ...(memoryParent === undefined ? {} : { memoryParent }),
    ...(pidsParent === undefined ? {} : { pidsParent }),
    problems: [...problems],
  };
}

function parseIdentity(value: unknown): BwrapEnvironment['identity'] {
  if (!isRecord(value)) return undefined;
  if (value.kind === 'parent') {
    return isId(value.uid) && isId(value.gid)
      ? { kind: 'parent', uid: value.uid, gid: value.gid }
      : undefined;
  }
  const { ids, setpriv, setprivLibraries } = value;
  if (value.kind !== 'dropped' || !isRecord(ids) || !isPath(setpriv)) return undefined;
  const { first, count } = ids;
  if (!isId(first) || first === 0 || !isId(count) || count === 0) return undefined;
  if (!Array.isArray(setprivLibraries) || !setprivLibraries.every(isPath)) return undefined;
  return {
    kind: 'dropped',
    ids: { first, count },
    setpriv,
    setprivLibraries: [...setprivLibraries],
  };
}
