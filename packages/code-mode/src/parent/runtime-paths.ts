import { dirname, join, resolve, sep } from 'node:path';

// node:fs without an ES import, whose namespace would run node:fs's lazy getters at import
// (~7 ms: docs/decisions/2026-12-07-round-trip-and-imports.md); Node has loaded node:fs already.
const { existsSync, readFileSync, realpathSync } = process.getBuiltinModule('node:fs');

interface PackageManifest {
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

/** Where Node finds `name` from `directory`: the first `node_modules/<name>` up the tree. */
function findInstalled(name: string, directory: string): string | undefined {
  for (let current = directory; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(current) === current) return undefined;
  }
}

/** The options of {@link packageRuntimePaths}. */
export interface PackageRuntimePathsOptions {
  /**
   * Packages whose own directory the host reads but whose dependencies it never loads, such as a
   * native addon whose dependencies only build or download it at install time.
   */
  readonly withoutDependencies?: readonly string[];
}

/**
 * The paths a host needs to read to load a package and everything it depends on: each package's
 * real directory and, where a package manager links it (pnpm), the link's path too, because
 * Node's resolver reads both. Engines pass them as `runtimePaths`, so the host process can read
 * its own code and nothing else.
 *
 * @example
 * ```ts
 * const runtimePaths = packageRuntimePaths(fileURLToPath(new URL('..', import.meta.url)));
 * ```
 */
export function packageRuntimePaths(packageRoot: string, options: PackageRuntimePathsOptions = {}): string[] {
  const leaves = new Set(options.withoutDependencies ?? []);
  const paths = new Set<string>();
  const visited = new Set<string>();
  const visit = (root: string) => {
    const real = realpathSync(root);
    paths.add(resolve(root));
    paths.add(real);
    if (visited.has(real)) return;
    visited.add(real);
    const manifest = JSON.parse(readFileSync(join(real, 'package.json'), 'utf8')) as PackageManifest & {
      readonly name?: string;
    };
    if (manifest.name !== undefined && leaves.has(manifest.name)) return;
    const names = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      // Optional peers (a test runner, say) are never part of what a host loads.
      ...Object.keys(manifest.peerDependencies ?? {}).filter(
        (name) => manifest.peerDependenciesMeta?.[name]?.optional !== true,
      ),
      ...Object.keys(manifest.optionalDependencies ?? {}),
    ]);
    for (const name of names) {
      // Resolved from the link's directory as well as the real one, as Node does.
      const installed = findInstalled(name, real) ?? findInstalled(name, root);
      if (installed) visit(installed);
    }
  };
  visit(resolve(packageRoot));
  return withoutNestedPaths([...paths]);
}

/**
 * The shortest list that grants the same: normalised, without duplicates, without a path inside
 * another (Node 20's permission model aborts on some overlapping grants).
 */
function withoutNestedPaths(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths.map((path) => resolve(path)))].sort();
  const kept: string[] = [];
  for (const path of sorted) {
    const parent = kept.at(-1);
    if (parent !== undefined && (path === parent || path.startsWith(parent + sep))) continue;
    kept.push(path);
  }
  return kept;
}
