import type { SandboxSpawnPlan } from '@ghost/core/sandbox';
import { ancestorsOf, isInside, uniqueSorted, withoutNested } from './path-lists.js';
import type { ProfilePaths } from './profile-paths.js';
import type { SbplExpression, SbplFilter, SbplSection } from './render-sbpl.js';
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

// The sections of a seatbelt profile, each a group of rules with the comment that explains them.

/** The command: read, mapped executable and executed. */
export function commandSection(command: string, paths: ProfilePaths): SbplSection {
  return {
    comment: [
      'The command: read, mapped executable and executed (sandbox-exec starts it under this profile).',
    ],
    forms: [
      {
        head: ['allow', 'file-read*', 'file-map-executable'],
        filters: [{ expression: ['literal', paths.expression(command)] }],
      },
    ],
  };
}

export function processSection(
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

export function runtimeSection(runtimePaths: readonly string[], paths: ProfilePaths): SbplSection {
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

export function librarySections(libraries: readonly string[], paths: ProfilePaths): SbplSection[] {
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
export function workspaceSection(
  workspace: string,
  readOnly: readonly string[],
  paths: ProfilePaths,
): SbplSection {
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

export function systemLibrariesSection(): SbplSection {
  return {
    comment: ['System libraries: read and mapped executable.'],
    forms: [
      { head: ['allow', 'file-read*', 'file-map-executable'], filters: systemLibraries.map(pathFilter) },
    ],
  };
}

export function systemFilesSection(): SbplSection {
  return {
    comment: ['System files: read only.'],
    forms: [{ head: ['allow', 'file-read*'], filters: systemFiles.map(pathFilter) }],
  };
}

export function nullDeviceSection(): SbplSection {
  return {
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
  };
}

export function sysctlSection(): SbplSection {
  return {
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
  };
}

export function noNetworkSection(): SbplSection {
  return {
    comment: [
      'Network: none. No socket connects, binds or accepts, and no Mach service is looked up, so',
      'DNS and the system daemons are out of reach too.',
    ],
    forms: [],
  };
}

/** `network: 'shared'`: every TCP and UDP address, and host names resolved the way macOS does. */
export function sharedNetworkSection(): SbplSection {
  return {
    comment: [
      "Network: the machine's, unrestricted ('shared' means any TCP or UDP address and port, out and in),",
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
 * Metadata (never contents) of the directories leading to the granted paths and of the links
 * followed on the way to them: `realpath(3)` and module resolution look at each. What a readable
 * subpath already covers is left out.
 */
export function pathwaySection(
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
