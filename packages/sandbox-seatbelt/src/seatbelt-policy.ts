import { ConfigurationError, type SandboxSpawnPlan } from '@ghost/core/sandbox';
import { MacPathResolver, type Realpath } from './mac-path-resolver.js';
import { uniqueSorted } from './path-lists.js';
import { ProfilePaths } from './profile-paths.js';
import { asciiJson, renderSbpl, type SbplSection } from './render-sbpl.js';
import {
  mdnsResponderSocket,
  nameResolutionFiles,
  nullDevice,
  systemFiles,
  systemLibraries,
} from './seatbelt-allowlists.js';
import {
  commandSection,
  librarySections,
  noNetworkSection,
  nullDeviceSection,
  pathwaySection,
  processSection,
  runtimeSection,
  sharedNetworkSection,
  sysctlSection,
  systemFilesSection,
  systemLibrariesSection,
  workspaceSection,
} from './seatbelt-sections.js';

/** What {@link seatbeltPolicy} needs besides the plan. */
export interface SeatbeltLayout {
  /** Resolves symbolic links; see {@link Realpath}. */
  readonly realpath: Realpath;
  /**
   * Shared libraries the command loads from outside the system locations (a Homebrew `node`
   * loads ICU, OpenSSL and libuv from `/opt/homebrew`): read and mapped executable.
   */
  readonly sharedLibraries: readonly string[];
}

/** A generated profile and the parameters it reads, as `sandbox-exec -p profile -DNAME=value` takes them. */
export interface SeatbeltPolicy {
  /** The profile text (SBPL): printable ASCII and line breaks only. */
  readonly profile: string;
  /** The values of `(param "NAME")` in the profile, by name: paths that are not written into it. */
  readonly parameters: Readonly<Record<string, string>>;
}

/**
 * The seatbelt policy for one planned spawn: a deny-by-default profile that lets the command
 * start and run and nothing more. Reads: the command, the runtime paths, the shared libraries,
 * the system locations Node needs. Writes: the workspace only (minus any runtime path inside it),
 * and `/dev/null`. Executes: the command only, and with `subprocesses: 'allow'` the runtime paths
 * (no fork otherwise). Signals and process information: this process (or its sandbox, with
 * subprocesses). sysctls: a fixed list of machine and OS facts. Network: none, or with
 * `network: 'shared'` every TCP and UDP address and host-name resolution.
 *
 * Every path is canonical ({@link MacPathResolver}). A path that is plain printable ASCII and
 * short is written into the profile as a string literal, so the profile reads on its own;
 * any other goes through a parameter (`(param "PATH_0")`), so no text of a path is ever parsed
 * as profile.
 *
 * @throws ConfigurationError when a path cannot be made canonical, or the workspace is `/`.
 */
export function seatbeltPolicy(plan: SandboxSpawnPlan, layout: SeatbeltLayout): SeatbeltPolicy {
  const canonical = canonicalPaths(plan, layout);
  const paths = new ProfilePaths();
  const sections = profileSections(plan, canonical, paths);
  requireFilters(sections);
  const parameters = paths.parameters();
  return { profile: renderSbpl(profileHeader(parameters), sections), parameters };
}

/** The spec's paths made canonical, and the links followed on the way to them. */
interface CanonicalPaths {
  readonly command: string;
  readonly runtimePaths: readonly string[];
  readonly workspace: string;
  readonly libraries: readonly string[];
  readonly links: readonly string[];
}

function canonicalPaths(plan: SandboxSpawnPlan, layout: SeatbeltLayout): CanonicalPaths {
  const resolver = new MacPathResolver(layout.realpath);
  const given = [
    { path: plan.command, field: 'command' },
    ...plan.runtimePaths.map((path, index) => ({ path, field: `runtimePaths[${index}]` })),
    { path: plan.workspace, field: 'workspace' },
    ...layout.sharedLibraries.map((path, index) => ({ path, field: `sharedLibraries[${index}]` })),
  ];
  const command = resolver.canonical(plan.command, 'command');
  const runtimePaths = uniqueSorted(
    plan.runtimePaths.map((path, index) => resolver.canonical(path, `runtimePaths[${index}]`)),
  );
  const workspace = resolver.canonical(plan.workspace, 'workspace');
  if (workspace === '/') {
    throw new ConfigurationError(
      "The spawn spec's workspace is the root directory, which would make every file writable. Use a directory made for the program.",
      { option: 'workspace', path: plan.workspace },
    );
  }
  const libraries = uniqueSorted(
    layout.sharedLibraries.map((path, index) => resolver.canonical(path, `sharedLibraries[${index}]`)),
  );
  const links = given.flatMap(({ path, field }) => resolver.symlinksOnTheWay(path, field));
  return { command, runtimePaths, workspace, libraries, links };
}

/** The profile's sections, in order; each path is written through `paths` as it is met. */
function profileSections(
  plan: SandboxSpawnPlan,
  canonical: CanonicalPaths,
  paths: ProfilePaths,
): SbplSection[] {
  const { command, runtimePaths, workspace, libraries, links } = canonical;
  const isSharedNetwork = plan.network === 'shared';
  const granted = [
    command,
    ...runtimePaths,
    workspace,
    ...libraries,
    ...[...systemLibraries, ...systemFiles].map(({ path }) => path),
    nullDevice,
    ...(isSharedNetwork ? [...nameResolutionFiles.map(({ path }) => path), mdnsResponderSocket] : []),
  ];
  const readableRoots = [
    ...runtimePaths,
    workspace,
    ...[...systemLibraries, ...systemFiles]
      .filter(({ match }) => match === 'subpath')
      .map(({ path }) => path),
  ];
  return [
    { comment: [], forms: [{ head: ['version', 1] }] },
    {
      comment: [
        'Everything not allowed below is denied: other files, writes outside the workspace, other',
        'programs and processes, the network, Mach services, POSIX shared memory, IOKit, other sysctls.',
      ],
      forms: [{ head: ['deny', 'default'] }],
    },
    commandSection(command, paths),
    processSection(plan, command, runtimePaths, paths),
    runtimeSection(runtimePaths, paths),
    ...librarySections(libraries, paths),
    workspaceSection(workspace, [command, ...runtimePaths, ...libraries], paths),
    pathwaySection(granted, readableRoots, links, paths),
    systemLibrariesSection(),
    systemFilesSection(),
    nullDeviceSection(),
    sysctlSection(),
    isSharedNetwork ? sharedNetworkSection() : noNetworkSection(),
  ];
}

/** The comment at the top of the profile: what it is, how to run it, and its parameters. */
function profileHeader(parameters: Readonly<Record<string, string>>): string[] {
  const header = [
    'Seatbelt profile for one Ghost sandbox, generated by @ghost/sandbox-seatbelt from a spawn spec.',
    'Run: /usr/bin/sandbox-exec -p <this profile> [-D<NAME>=<value> ...] -- <command> [arguments]',
  ];
  const names = Object.keys(parameters);
  if (names.length > 0) {
    header.push('Paths given as parameters (-D<NAME>=<path>), shown here JSON-escaped:');
    for (const name of names) header.push(`  ${name} = ${asciiJson(parameters[name] as string)}`);
  }
  return header;
}

/**
 * An allow rule without filters allows everywhere. Only `(allow process-fork)` is meant that way;
 * any other such rule is a bug here, refused before it reaches a profile.
 */
function requireFilters(sections: readonly SbplSection[]): void {
  for (const { forms } of sections) {
    for (const { head, filters } of forms) {
      const isUnfilteredAllow = head[0] === 'allow' && (filters ?? []).length === 0;
      if (isUnfilteredAllow && !(head.length === 2 && head[1] === 'process-fork')) {
        throw new Error(`A seatbelt rule without filters would allow ${head.slice(1).join(' ')} everywhere.`);
      }
    }
  }
}
