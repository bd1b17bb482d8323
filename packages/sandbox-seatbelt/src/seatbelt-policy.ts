import { ConfigurationError, type SandboxSpawnPlan } from '@ghost/core/sandbox';
import { MacPathResolver, type Realpath } from './mac-path-resolver.js';
import {
  asciiJson,
  isPlainAscii,
  renderSbpl,
  type SbplExpression,
  type SbplFilter,
  type SbplSection,
} from './render-sbpl.js';
import {
  dnsConfigurationService,
  macStandardLinks,
  mdnsResponderSocket,
  nameResolutionFiles,
  nullDevice,
  type PathAllowance,
  sysctlReads,
  systemFiles,
  systemLibraries,
} from './seatbelt-allowlists.js';

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
 * The longest path written into a profile as a string literal, in bytes once escaped. Longer
 * literals are reported to break a profile from about 1 KB on; the limit is not documented, so
 * this keeps well under it, and a longer path goes through a parameter, which has no such limit.
 */
export const largestInlinePathBytes = 512;

/**
 * The seatbelt policy for one planned spawn: a deny-by-default profile that lets the command
 * start and run and nothing more. Reads: the command, the runtime paths, the shared libraries,
 * the system locations Node needs. Writes: the workspace only (minus any runtime path inside it),
 * and `/dev/null`. Executes: the command only, and with `subprocesses: 'allow'` the runtime paths
 * (no fork otherwise). Signals and process information: this process (or its sandbox, with
 * subprocesses). sysctls: a fixed list of machine and OS facts. Network: none, or with
 * `network: 'host'` every TCP and UDP address and host-name resolution.
 *
 * Every path is canonical ({@link MacPathResolver}). A path that is plain printable ASCII and
 * short is written into the profile as a string literal, so the profile reads on its own;
 * any other goes through a parameter (`(param "PATH_0")`), so no text of a path is ever parsed
 * as profile.
 *
 * @throws ConfigurationError when a path cannot be made canonical, or the workspace is `/`.
 */
export function seatbeltPolicy(plan: SandboxSpawnPlan, layout: SeatbeltLayout): SeatbeltPolicy {
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

  const paths = new ProfilePaths();
  const isHostNetwork = plan.network === 'host';
  const granted = [
    command,
    ...runtimePaths,
    workspace,
    ...libraries,
    ...[...systemLibraries, ...systemFiles].map(({ path }) => path),
    nullDevice,
    ...(isHostNetwork ? [...nameResolutionFiles.map(({ path }) => path), mdnsResponderSocket] : []),
  ];
  const readableRoots = [
    ...runtimePaths,
    workspace,
    ...[...systemLibraries, ...systemFiles]
      .filter(({ match }) => match === 'subpath')
      .map(({ path }) => path),
  ];

  const sections: SbplSection[] = [
    { comment: [], forms: [{ head: ['version', 1] }] },
    {
      comment: [
        'Everything not allowed below is denied: other files, writes outside the workspace, other',
        'programs and processes, the network, Mach services, POSIX shared memory, IOKit, other sysctls.',
      ],
      forms: [{ head: ['deny', 'default'] }],
    },
    {
      comment: [
        'The command: read, mapped executable and executed (sandbox-exec starts it under this profile).',
      ],
      forms: [
        {
          head: ['allow', 'file-read*', 'file-map-executable'],
          filters: [{ expression: ['literal', paths.expression(command)] }],
        },
      ],
    },
    processSection(plan, command, runtimePaths, paths),
    runtimeSection(runtimePaths, paths),
    ...librarySections(libraries, paths),
    workspaceSection(workspace, [command, ...runtimePaths, ...libraries], paths),
    pathwaySection(granted, readableRoots, links, paths),
    {
      comment: ['System libraries: read and mapped executable.'],
      forms: [
        { head: ['allow', 'file-read*', 'file-map-executable'], filters: systemLibraries.map(pathFilter) },
      ],
    },
    {
      comment: ['System files: read only.'],
      forms: [{ head: ['allow', 'file-read*'], filters: systemFiles.map(pathFilter) }],
    },
    {
      comment: [
        'The null device: the one device written to. Standard streams the parent left closed point',
        'at it, and a stream is read, written and set up with ioctl(2). No other device is written.',
      ],
      forms: [
        {
          head: ['allow', 'file-read*', 'file-write-data', 'file-ioctl'],
          filters: [
            {
              expression: [
                'require-all',
                ['literal', { string: nullDevice }],
                ['vnode-type', 'CHARACTER-DEVICE'],
              ],
            },
          ],
        },
      ],
    },
    {
      comment: [
        'Facts about the machine and the OS that libSystem, libuv and V8 read. Not the host name',
        '(kern.hostname): it stays private, so os.hostname() and uname(3) fail in here.',
      ],
      forms: [
        {
          head: ['allow', 'sysctl-read'],
          filters: sysctlReads.map(({ name, match, reason }) => ({
            expression: [match === 'name' ? 'sysctl-name' : 'sysctl-name-prefix', { string: name }],
            comment: reason,
          })),
        },
      ],
    },
    isHostNetwork ? hostNetworkSection() : noNetworkSection(),
  ];

  requireFilters(sections);
  const header = [
    'Seatbelt profile for one Ghost sandbox, generated by @ghost/sandbox-seatbelt from a spawn spec.',
    'Run: /usr/bin/sandbox-exec -p <this profile> [-D<NAME>=<value> ...] -- <command> [arguments]',
  ];
  const parameters = paths.parameters();
  const names = Object.keys(parameters);
  if (names.length > 0) {
    header.push('Paths given as parameters (-D<NAME>=<path>), shown here JSON-escaped:');
    for (const name of names) header.push(`  ${name} = ${asciiJson(parameters[name] as string)}`);
  }
  return { profile: renderSbpl(header, sections), parameters };
}

/**
 * Metadata (never contents) of the directories leading to the granted paths and of the links
 * followed on the way to them: `realpath(3)` and module resolution look at each. What a readable
 * subpath already covers is left out.
 */
function pathwaySection(
  granted: readonly string[],
  readableRoots: readonly string[],
  links: readonly string[],
  paths: ProfilePaths,
): SbplSection {
  const isReadable = (path: string) => readableRoots.some((root) => isInside(path, root));
  const directories = uniqueSorted(granted.flatMap(ancestorsOf)).filter((path) => !isReadable(path));
  const isListed = (path: string) => isReadable(path) || directories.includes(path);
  const followedLinks = uniqueSorted(links).filter(
    (path) => !isListed(path) && !macStandardLinks.includes(path),
  );
  const standardLinks = macStandardLinks.filter((path) => !isListed(path));
  const filters: SbplFilter[] = [
    ...directories.map((path) => ({ expression: ['literal', paths.expression(path)] })),
    ...followedLinks.map((path) => ({
      expression: ['literal', paths.expression(path)],
      comment: 'a link on the way to a path above',
    })),
    ...standardLinks.map((path) => ({
      expression: ['literal', { string: path }],
      comment: `macOS's link to /private${path}`,
    })),
  ];
  return {
    comment: [
      'Directories leading to the paths in this profile, and the links followed on the way to them:',
      'their metadata only (realpath(3) and module resolution look at each), never their contents.',
    ],
    // A rule without filters would allow everywhere: with nothing left to list (a runtime path
    // of /), there is no rule.
    forms: filters.length === 0 ? [] : [{ head: ['allow', 'file-read-metadata'], filters }],
  };
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

function processSection(
  plan: SandboxSpawnPlan,
  command: string,
  runtimePaths: readonly string[],
  paths: ProfilePaths,
): SbplSection {
  const commandFilter: SbplFilter = { expression: ['literal', paths.expression(command)] };
  if (plan.subprocesses === 'deny') {
    return {
      comment: [
        'Subprocesses denied: no fork, and no program executed but the command itself (sandbox-exec',
        'starts it that way; running itself again replaces this process, in this sandbox). Threads are',
        'not processes and stay allowed. Signals and process information: this process only.',
      ],
      forms: [
        { head: ['allow', 'process-exec'], filters: [commandFilter] },
        { head: ['allow', 'signal'], filters: [{ expression: ['target', 'self'] }] },
        { head: ['allow', 'process-info*'], filters: [{ expression: ['target', 'self'] }] },
      ],
    };
  }
  return {
    comment: [
      'Subprocesses allowed: fork, and executing the command or a program in a runtime path. Children',
      'run under this profile too. Signals and process information: processes in this sandbox only.',
    ],
    forms: [
      { head: ['allow', 'process-fork'] },
      {
        head: ['allow', 'process-exec'],
        filters: [commandFilter, ...withoutNested(runtimePaths).map((path) => subpathFilter(path, paths))],
      },
      { head: ['allow', 'signal'], filters: [{ expression: ['target', 'same-sandbox'] }] },
      { head: ['allow', 'process-info*'], filters: [{ expression: ['target', 'same-sandbox'] }] },
    ],
  };
}

function runtimeSection(runtimePaths: readonly string[], paths: ProfilePaths): SbplSection {
  if (runtimePaths.length === 0) return { comment: ['Runtime paths: none.'], forms: [] };
  return {
    comment: ['Runtime paths: read and mapped executable (native addons), never written.'],
    forms: [
      {
        head: ['allow', 'file-read*', 'file-map-executable'],
        filters: withoutNested(runtimePaths).map((path) => subpathFilter(path, paths)),
      },
    ],
  };
}

function librarySections(libraries: readonly string[], paths: ProfilePaths): SbplSection[] {
  if (libraries.length === 0) return [];
  return [
    {
      comment: ['Shared libraries the command loads from outside the system: read and mapped executable.'],
      forms: [
        {
          head: ['allow', 'file-read*', 'file-map-executable'],
          filters: libraries.map((path) => ({ expression: ['literal', paths.expression(path)] })),
        },
      ],
    },
  ];
}

/**
 * Read and write in the workspace. A runtime path, the command or a library inside it is kept
 * out of the write rule, itself and all below it: `subpath` alone has been seen to leave the
 * creation of the path itself open, so it is excluded as a `literal` too.
 */
function workspaceSection(workspace: string, readOnly: readonly string[], paths: ProfilePaths): SbplSection {
  const inside = withoutNested(uniqueSorted(readOnly.filter((path) => isInside(path, workspace))));
  const place: SbplExpression = ['subpath', paths.expression(workspace)];
  const writable: SbplExpression =
    inside.length === 0
      ? place
      : [
          'require-all',
          place,
          ...inside.flatMap((path): SbplExpression[] => [
            ['require-not', ['literal', paths.expression(path)]],
            ['require-not', ['subpath', paths.expression(path)]],
          ]),
        ];
  return {
    comment: [
      'The workspace: read, and the one place written.',
      ...(inside.length === 0
        ? []
        : ['What runtime paths, the command and its libraries hold in it stays read-only.']),
    ],
    forms: [
      { head: ['allow', 'file-read*'], filters: [{ expression: place }] },
      { head: ['allow', 'file-write*'], filters: [{ expression: writable }] },
    ],
  };
}

function noNetworkSection(): SbplSection {
  return {
    comment: [
      'Network: none. No socket connects, binds or accepts, and no Mach service is looked up, so',
      'DNS and the system daemons are out of reach too.',
    ],
    forms: [],
  };
}

/** `network: 'host'`: every TCP and UDP address, and host names resolved the way macOS does. */
function hostNetworkSection(): SbplSection {
  return {
    comment: [
      "Network: the host's, unrestricted ('host' means any TCP or UDP address and port, out and in),",
      'with host names resolved as macOS does. Unix sockets other than the resolver stay closed.',
    ],
    forms: [
      {
        head: ['allow', 'network-outbound'],
        filters: [
          { expression: ['remote', 'tcp'], comment: 'any TCP connection' },
          { expression: ['remote', 'udp'], comment: 'any UDP datagram' },
          {
            expression: ['literal', { string: mdnsResponderSocket }],
            comment: 'getaddrinfo(3) asks mDNSResponder',
          },
          {
            expression: ['control-name', { string: 'com.apple.netsrc' }],
            comment: 'getaddrinfo(3) orders addresses with it',
          },
        ],
      },
      {
        head: ['allow', 'network-bind', 'network-inbound'],
        filters: [
          { expression: ['local', 'tcp'], comment: 'listening and accepting on any TCP port' },
          { expression: ['local', 'udp'], comment: 'receiving on any UDP port' },
        ],
      },
      {
        head: ['allow', 'system-socket'],
        filters: [
          { expression: ['socket-domain', 'AF_ROUTE'], comment: 'routing messages: interface changes' },
          {
            expression: ['require-all', ['socket-domain', 'AF_SYSTEM'], ['socket-protocol', 2]],
            comment: 'the kernel control socket com.apple.netsrc is reached by',
          },
        ],
      },
      {
        head: ['allow', 'mach-lookup'],
        filters: [
          {
            expression: ['global-name', { string: dnsConfigurationService }],
            comment: "the DNS servers, for Node's resolver and getaddrinfo(3)",
          },
        ],
      },
      {
        head: ['allow', 'sysctl-read'],
        filters: [
          {
            expression: ['sysctl-name-prefix', { string: 'net.routetable.' }],
            comment: "interface addresses (getifaddrs), for getaddrinfo(3)'s AI_ADDRCONFIG",
          },
        ],
      },
      { head: ['allow', 'file-read*'], filters: nameResolutionFiles.map(pathFilter) },
    ],
  };
}

function pathFilter({ path, match, reason }: PathAllowance): SbplFilter {
  return { expression: [match, { string: path }], comment: reason };
}

function subpathFilter(path: string, paths: ProfilePaths): SbplFilter {
  return { expression: ['subpath', paths.expression(path)] };
}

/**
 * Writes each path of the spec into the profile: as a string literal when it is plain printable
 * ASCII and short, as a parameter otherwise. The same path always gets the same parameter.
 */
class ProfilePaths {
  readonly #parameterNames = new Map<string, string>();

  expression(path: string): SbplExpression {
    const escapedBytes = path.length + (path.match(/[\\"]/g)?.length ?? 0);
    if (isPlainAscii(path) && escapedBytes <= largestInlinePathBytes) return { string: path };
    let name = this.#parameterNames.get(path);
    if (name === undefined) {
      name = `PATH_${this.#parameterNames.size}`;
      this.#parameterNames.set(path, name);
    }
    return ['param', { string: name }];
  }

  parameters(): Record<string, string> {
    const parameters: Record<string, string> = {};
    for (const [path, name] of this.#parameterNames) parameters[name] = path;
    return parameters;
  }
}

function isInside(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** The paths, without those inside another one of them: a `subpath` of the outer covers them. */
function withoutNested(paths: readonly string[]): string[] {
  return paths.filter((path) => !paths.some((other) => other !== path && isInside(path, other)));
}

/** Every directory above `path`, from `/` down, without `path` itself. */
function ancestorsOf(path: string): string[] {
  const components = path.split('/').filter(Boolean);
  const ancestors = ['/'];
  for (let length = 1; length < components.length; length += 1) {
    ancestors.push(`/${components.slice(0, length).join('/')}`);
  }
  return path === '/' ? [] : ancestors;
}

function uniqueSorted(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort();
}
