import { posix } from 'node:path';
import { ConfigurationError, type SandboxSpawnPlan } from '@ghost/core/sandbox';
import { describe, expect, it } from 'vitest';
import { largestInlinePathBytes } from './profile-paths.js';
import { type SeatbeltPolicy, seatbeltPolicy } from './seatbelt-policy.js';
import { checkProfileShape, type PathFilter, pathFiltersFor, readSbpl } from './test-support/sbpl-reader.js';

const plan: SandboxSpawnPlan = {
  command: '/usr/local/bin/node',
  args: [],
  env: {},
  runtimePaths: [],
  workspace: '/private/tmp/ghost-w',
  cwd: '/private/tmp/ghost-w',
  network: 'none',
  subprocesses: 'deny',
  extraFds: 1,
  limits: {},
  signal: undefined,
};

/** Nothing exists: every path is taken as written, with macOS's /tmp, /var and /etc links applied. */
const nothingExists = () => {
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};

/** Pieces of path names: ordinary, SBPL-significant, shell-significant, control, non-ASCII, broken. */
const pieces = [
  'a',
  'Z9',
  'node_modules',
  ' ',
  '"',
  '\\',
  '\\"',
  '(',
  ')',
  ';',
  '#',
  '#"',
  '|',
  "'",
  '`',
  '$',
  '=',
  '*',
  '[',
  '{',
  '~',
  '.',
  '..',
  'é',
  '日本',
  '😀',
  '\t',
  '\n',
  '\r',
  '\x01',
  '\x7f',
  '\0',
  '\ud800',
  '\udfff',
  'tmp',
  'var',
];

/** Random path strings from a fixed seed, so every run tries the same ones. */
function randomPaths(count: number): string[] {
  let seed = 20261204;
  // The high bits of the generator: its low bits repeat with a short period.
  const pick = (choices: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor((seed / 2147483648) * choices);
  };
  const paths: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const components: string[] = [];
    const depth = pick(6);
    for (let level = 0; level < depth; level += 1) {
      let name = '';
      const length = pick(5);
      for (let part = 0; part < length; part += 1) name += pieces[pick(pieces.length)];
      components.push(name);
    }
    if (pick(20) === 0) components.push('x'.repeat(400 + pick(800)));
    const separator = ['/', '/', '/', '//', '/./'][pick(5)] as string;
    const start = pick(10) === 0 ? '' : ['/', '/tmp/', '/var/', '/etc/'][pick(4)];
    paths.push(`${start}${components.join(separator)}${pick(4) === 0 ? '/' : ''}`);
  }
  return paths;
}

/** What macOS would resolve `path` to when nothing on it is a link: written independently of the resolver. */
function expectedCanonical(path: string): string {
  let normal = posix.normalize(path);
  if (normal.length > 1 && normal.endsWith('/')) normal = normal.slice(0, -1);
  const alias = /^\/(tmp|var|etc)(\/|$)/.exec(normal);
  return alias === null ? normal : `/private${normal}`;
}

/**
 * The path filter naming the runtime path (the first `subpath` read and mapped: the runtime rule
 * comes before the system libraries) or the workspace (the one-filter read rule).
 */
function filterNaming(policy: SeatbeltPolicy, place: 'runtime' | 'workspace'): PathFilter | undefined {
  const rules = checkProfileShape(readSbpl(policy.profile), policy.parameters);
  const operations = place === 'runtime' ? 'file-read* file-map-executable' : 'file-read*';
  const candidates = rules.filter(
    (rule) => rule.operations.join(' ') === operations && (place === 'runtime' || rule.filters.length === 1),
  );
  return pathFiltersFor(candidates, 'file-read-data', policy.parameters).find(
    (filter) => filter.kind === 'subpath',
  );
}

const hasLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('seatbeltPolicy with random path strings', () => {
  const samples = randomPaths(1500);

  it('writes each path so it reads back as itself, or passes it as a parameter, or refuses it clearly', () => {
    const outcomes = { literal: 0, parameter: 0, refused: 0 };
    for (const [index, path] of samples.entries()) {
      const place = index % 2 === 0 ? 'runtime' : 'workspace';
      const planned = place === 'runtime' ? { ...plan, runtimePaths: [path] } : { ...plan, workspace: path };
      let policy: SeatbeltPolicy;
      try {
        policy = seatbeltPolicy(planned, { realpath: nothingExists, sharedLibraries: [] });
      } catch (error) {
        expect(error, JSON.stringify(path)).toBeInstanceOf(ConfigurationError);
        const canonical = path.startsWith('/') ? expectedCanonical(path) : '';
        const isRefusable =
          !path.startsWith('/') ||
          hasLoneSurrogate.test(path) ||
          path.includes('\0') ||
          Buffer.byteLength(canonical) > 1023 ||
          (place === 'workspace' && canonical === '/');
        expect(isRefusable, JSON.stringify(path)).toBe(true);
        expect((error as Error).message).toMatch(
          /must be an absolute path|not valid Unicode|NUL byte|macOS accepts at most 1023|workspace is the root directory/,
        );
        outcomes.refused += 1;
        continue;
      }
      expect(policy.profile, JSON.stringify(path)).toMatch(/^[\x20-\x7e\n]*$/);
      const filter = filterNaming(policy, place);
      const canonical = expectedCanonical(path);
      expect(filter?.path, JSON.stringify(path)).toBe(canonical);
      if (filter === undefined) continue;
      if (filter.parameter === undefined) {
        // Written into the profile: only plain ASCII, short enough for a literal.
        expect(canonical).toMatch(/^[\x20-\x7e]+$/);
        expect(canonical.length).toBeLessThanOrEqual(largestInlinePathBytes);
        outcomes.literal += 1;
      } else {
        expect(policy.parameters[filter.parameter]).toBe(canonical);
        expect(policy.profile).toContain(`(param "${filter.parameter}")`);
        outcomes.parameter += 1;
      }
    }
    // The sample reaches every outcome, so none of the branches above is dead.
    expect(outcomes.literal).toBeGreaterThan(100);
    expect(outcomes.parameter).toBeGreaterThan(100);
    expect(outcomes.refused).toBeGreaterThan(100);
  });
});
