import { ConfigurationError } from '@ghost/core';
import type { SandboxSpawnSpec } from '@ghost/core/sandbox';
import { describe, expect, it } from 'vitest';
import { sandboxExecPath, seatbeltArguments } from './seatbelt-arguments.js';
import { type SeatbeltProfileOptions, seatbeltProfile } from './seatbelt-profile.js';
import { fakeMacRealpath } from './test-support/fake-mac-realpath.js';
import {
  checkProfileShape,
  pathFiltersFor,
  type ReadRule,
  readSbpl,
  rulesFor,
  writeSExpression,
} from './test-support/sbpl-reader.js';

/** A Mac as a test describes it: a Node from nodejs.org, an agent's code, a workspace in $TMPDIR. */
const macRealpath = fakeMacRealpath({
  existing: [
    '/usr/local/bin/node',
    '/opt/ghost/host/node_modules/engine',
    '/Users/dev/My Agent/tools',
    '/private/var/folders/zz/abc123/T/ghost-program-1',
  ],
});

const baseSpec: SandboxSpawnSpec = {
  command: '/usr/local/bin/node',
  args: ['/opt/ghost/host/host.js', '--engine=quickjs'],
  env: { NODE_OPTIONS: '' },
  runtimePaths: ['/opt/ghost/host', '/opt/ghost/host/node_modules/engine', '/Users/dev/My Agent/tools'],
  workspace: '/var/folders/zz/abc123/T/ghost-program-1',
  subprocesses: 'deny',
};

/** The profile and its arguments for `spec`, read back and checked by the test's own reader. */
function generate(spec: SandboxSpawnSpec, options: SeatbeltProfileOptions = { realpath: macRealpath }) {
  const profile = seatbeltProfile(spec, options);
  const args = seatbeltArguments(spec, options);
  const separator = args.indexOf('--');
  const parameters = Object.fromEntries(
    args.slice(2, separator).map((definition) => {
      expect(definition).toMatch(/^-DPATH_\d+=/);
      const equals = definition.indexOf('=');
      return [definition.slice(2, equals), definition.slice(equals + 1)];
    }),
  );
  const rules = checkProfileShape(readSbpl(profile), parameters);
  return { profile, args, parameters, rules };
}

function paths(
  rules: readonly ReadRule[],
  operation: string,
  parameters: Record<string, string> = {},
): string[] {
  return pathFiltersFor(rules, operation, parameters).map(({ kind, path }) => `${kind} ${path}`);
}

describe('seatbeltProfile golden profiles (a reviewer reads src/golden/*.sb)', () => {
  it('no network, subprocesses denied, nested runtime paths and a path with a space', async () => {
    const { profile } = generate(baseSpec);
    await expect(profile).toMatchFileSnapshot('./golden/no-network.sb');
  });

  it("network: 'shared'", async () => {
    const { profile } = generate({ ...baseSpec, network: 'shared' });
    await expect(profile).toMatchFileSnapshot('./golden/shared-network.sb');
  });

  it("subprocesses: 'allow'", async () => {
    const { profile } = generate({ ...baseSpec, subprocesses: 'allow' });
    await expect(profile).toMatchFileSnapshot('./golden/subprocesses-allowed.sb');
  });

  it('quotes, backslashes, parentheses, symlinks, a non-ASCII name, a runtime path in the workspace', async () => {
    const realpath = fakeMacRealpath({
      existing: [
        '/opt/homebrew/Cellar/node/24.1.0/bin/node',
        '/opt/homebrew/Cellar/icu4c/77.1/lib/libicuuc.77.dylib',
        '/Users/dev/agent "quoted" (v2); #1',
        '/Users/dev/back\\slash',
        '/Users/dev/releases/2026-12-04/tools',
        '/Users/José/agent',
        '/private/tmp/ghost-program-2/vendor',
      ],
      links: {
        '/opt/homebrew/bin/node': '../Cellar/node/24.1.0/bin/node',
        '/opt/homebrew/opt/icu4c': '../Cellar/icu4c/77.1',
        '/Users/dev/current': 'releases/2026-12-04',
      },
    });
    const { profile, args } = generate(
      {
        command: '/opt/homebrew/bin/node',
        args: ['host.js'],
        env: {},
        runtimePaths: [
          '/Users/dev/agent "quoted" (v2); #1',
          '/Users/dev/back\\slash',
          '/Users/dev/current/tools/',
          '/Users/José/agent',
          '/tmp/ghost-program-2/./vendor',
        ],
        workspace: '/tmp//ghost-program-2',
        subprocesses: 'deny',
      },
      { realpath, sharedLibraries: ['/opt/homebrew/opt/icu4c/lib/libicuuc.77.dylib'] },
    );
    await expect(profile).toMatchFileSnapshot('./golden/awkward-paths.sb');
    expect(args.filter((argument) => argument.startsWith('-D'))).toEqual([
      '-DPATH_0=/Users/José/agent',
      '-DPATH_1=/Users/José',
    ]);
  });
});

describe('seatbeltProfile', () => {
  it('writes printable ASCII and line breaks only, and reads back as (version 1), (deny default) and allow rules', () => {
    const { profile, rules } = generate(baseSpec);
    expect(profile).toMatch(/^[\x20-\x7e\n]*$/);
    const forms = readSbpl(profile).map(writeSExpression);
    expect(forms.slice(0, 2)).toEqual(['(version 1)', '(deny default)']);
    expect(rules.length).toBe(forms.length - 2);
  });

  it('lets the workspace alone be written, besides /dev/null, and nothing be created elsewhere', () => {
    const { rules } = generate(baseSpec);
    expect(paths(rules, 'file-write-create')).toEqual([
      'subpath /private/var/folders/zz/abc123/T/ghost-program-1',
    ]);
    expect(paths(rules, 'file-write-data')).toEqual([
      'subpath /private/var/folders/zz/abc123/T/ghost-program-1',
    ]);
    // The one other write: data into the null device, and nothing else there.
    expect(rulesFor(rules, 'file-write-data').map((rule) => rule.filters.map(writeSExpression))).toEqual([
      ['(require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE))'],
    ]);
    const writeRules = rules.filter((rule) =>
      rule.operations.some((operation) => operation.startsWith('file-write')),
    );
    expect(writeRules).toHaveLength(2);
  });

  it('reads the command, the runtime paths and the workspace at their canonical paths', () => {
    const { rules } = generate(baseSpec);
    const readable = paths(rules, 'file-read-data');
    expect(readable).toEqual(
      expect.arrayContaining([
        'literal /usr/local/bin/node',
        'subpath /Users/dev/My Agent/tools',
        'subpath /opt/ghost/host',
        'subpath /private/var/folders/zz/abc123/T/ghost-program-1',
      ]),
    );
    // The nested runtime path is inside /opt/ghost/host, so that subpath covers it.
    expect(readable).not.toContain('subpath /opt/ghost/host/node_modules/engine');
    expect(readable.some((entry) => entry.includes(' /var/') || entry.includes(' /tmp/'))).toBe(false);
  });

  it('maps executable code from the command, runtime paths and system libraries, never from the workspace', () => {
    const { rules } = generate(baseSpec);
    const mappable = paths(rules, 'file-map-executable');
    expect(mappable).toContain('literal /usr/local/bin/node');
    expect(mappable).toContain('subpath /opt/ghost/host');
    expect(mappable).toContain('subpath /usr/lib');
    expect(mappable.some((entry) => entry.includes('ghost-program-1'))).toBe(false);
  });

  it("with subprocesses: 'deny' executes the command only and never forks; signals reach itself only", () => {
    const { rules } = generate(baseSpec);
    expect(rulesFor(rules, 'process-fork')).toEqual([]);
    expect(paths(rules, 'process-exec')).toEqual(['literal /usr/local/bin/node']);
    expect(rulesFor(rules, 'signal').map((rule) => rule.filters.map(writeSExpression))).toEqual([
      ['(target self)'],
    ]);
    expect(rulesFor(rules, 'process-info*').map((rule) => rule.filters.map(writeSExpression))).toEqual([
      ['(target self)'],
    ]);
  });

  it("with subprocesses: 'allow' forks and executes the command and runtime paths, signals within the sandbox", () => {
    const { rules } = generate({ ...baseSpec, subprocesses: 'allow' });
    expect(rulesFor(rules, 'process-fork').map((rule) => rule.filters)).toEqual([[]]);
    expect(paths(rules, 'process-exec')).toEqual([
      'literal /usr/local/bin/node',
      'subpath /Users/dev/My Agent/tools',
      'subpath /opt/ghost/host',
    ]);
    expect(rulesFor(rules, 'signal').map((rule) => rule.filters.map(writeSExpression))).toEqual([
      ['(target same-sandbox)'],
    ]);
  });

  it('leaves subprocesses allowed when the spec says nothing, as the contract defaults', () => {
    const { subprocesses: _left, ...spec } = baseSpec;
    expect(rulesFor(generate(spec).rules, 'process-fork')).toHaveLength(1);
  });

  it('has no network rule, Mach service or DNS file without network, and all of them with a shared network', () => {
    const networkOperations = [
      'network-outbound',
      'network-inbound',
      'network-bind',
      'system-socket',
      'mach-lookup',
    ];
    const none = generate(baseSpec);
    for (const operation of networkOperations) expect(rulesFor(none.rules, operation)).toEqual([]);
    expect(none.profile).not.toContain('hosts');
    expect(none.profile).not.toContain('net.routetable');

    const shared = generate({ ...baseSpec, network: 'shared' });
    for (const operation of networkOperations) expect(rulesFor(shared.rules, operation)).not.toEqual([]);
    const outbound = rulesFor(shared.rules, 'network-outbound').flatMap((rule) =>
      rule.filters.map(writeSExpression),
    );
    expect(outbound).toEqual(
      expect.arrayContaining(['(remote tcp)', '(remote udp)', '(literal "/private/var/run/mDNSResponder")']),
    );
    expect(
      rulesFor(shared.rules, 'mach-lookup').flatMap((rule) => rule.filters.map(writeSExpression)),
    ).toEqual(['(global-name "com.apple.SystemConfiguration.DNSConfiguration")']);
  });

  it('allows only the listed sysctls, and never the host name', () => {
    const { rules } = generate(baseSpec);
    const sysctls = rulesFor(rules, 'sysctl-read').flatMap((rule) => rule.filters.map(writeSExpression));
    expect(sysctls).toContain('(sysctl-name "hw.memsize")');
    expect(sysctls).toContain('(sysctl-name-prefix "hw.optional.")');
    expect(sysctls.some((filter) => filter.includes('kern.hostname'))).toBe(false);
    expect(sysctls.some((filter) => filter.includes('kern.proc'))).toBe(false);
  });

  it('gives metadata, not contents, of the directories and links leading to granted paths', () => {
    const realpath = fakeMacRealpath({
      existing: ['/usr/local/bin/node', '/Users/dev/releases/v2/host', '/private/tmp/ghost-1'],
      links: { '/Users/dev/current': 'releases/v2' },
    });
    const { rules } = generate(
      { ...baseSpec, runtimePaths: ['/Users/dev/current/host'], workspace: '/tmp/ghost-1' },
      { realpath },
    );
    const metadata = paths(rules, 'file-read-metadata');
    for (const path of [
      '/',
      '/Users',
      '/Users/dev',
      '/Users/dev/releases',
      '/Users/dev/releases/v2',
      '/private/tmp',
    ]) {
      expect(metadata).toContain(`literal ${path}`);
      expect(paths(rules, 'file-read-data')).not.toContain(`literal ${path}`);
    }
    // The link followed on the way, where it is, and macOS's own links.
    expect(metadata).toEqual(
      expect.arrayContaining(['literal /Users/dev/current', 'literal /tmp', 'literal /var', 'literal /etc']),
    );
    expect(paths(rules, 'file-read-data')).toContain('subpath /Users/dev/releases/v2/host');
  });

  it('with / as a runtime path reads everything but writes the workspace only, and no rule goes unfiltered', () => {
    const { rules } = generate({ ...baseSpec, runtimePaths: ['/'] });
    expect(paths(rules, 'file-read-data')).toContain('subpath /');
    expect(rulesFor(rules, 'file-read-metadata')).toEqual([]);
    expect(paths(rules, 'file-write-create')).toEqual([
      'subpath /private/var/folders/zz/abc123/T/ghost-program-1',
    ]);
  });

  it('keeps a runtime path, the command and a library inside the workspace out of the write rule', () => {
    const realpath = fakeMacRealpath({
      existing: ['/private/tmp/ws/bin/node', '/private/tmp/ws/runtime', '/private/tmp/ws/lib/libx.dylib'],
    });
    const { rules } = generate(
      {
        ...baseSpec,
        command: '/tmp/ws/bin/node',
        runtimePaths: ['/tmp/ws/runtime'],
        workspace: '/tmp/ws',
      },
      { realpath, sharedLibraries: ['/tmp/ws/lib/libx.dylib'] },
    );
    const write = rulesFor(rules, 'file-write*').map((rule) => rule.filters.map(writeSExpression));
    expect(write).toEqual([
      [
        '(require-all (subpath "/private/tmp/ws")' +
          ' (require-not (literal "/private/tmp/ws/bin/node")) (require-not (subpath "/private/tmp/ws/bin/node"))' +
          ' (require-not (literal "/private/tmp/ws/lib/libx.dylib")) (require-not (subpath "/private/tmp/ws/lib/libx.dylib"))' +
          ' (require-not (literal "/private/tmp/ws/runtime")) (require-not (subpath "/private/tmp/ws/runtime")))',
      ],
    ]);
  });

  it('passes a path that is not plain ASCII, or is long, as a parameter, and names its value in the header', () => {
    const realpath = fakeMacRealpath({
      existing: ['/usr/local/bin/node', '/Users/Zoë/agent', '/private/tmp/w'],
    });
    const { profile, args, parameters, rules } = generate(
      { ...baseSpec, runtimePaths: ['/Users/Zoë/agent'], workspace: '/tmp/w' },
      { realpath },
    );
    // The directory above it is not plain ASCII either, and is listed for its metadata.
    expect(parameters).toEqual({ PATH_0: '/Users/Zoë/agent', PATH_1: '/Users/Zoë' });
    expect(profile).toContain('(subpath (param "PATH_0"))');
    expect(profile).toContain('(literal (param "PATH_1"))');
    expect(profile).toContain('PATH_0 = "/Users/Zo\\u00eb/agent"');
    expect(profile).not.toContain('Zoë');
    expect(pathFiltersFor(rules, 'file-read-data', parameters)).toContainEqual({
      kind: 'subpath',
      path: '/Users/Zoë/agent',
      parameter: 'PATH_0',
    });
    expect(args.slice(args.indexOf('--'))).toEqual(['--', '/usr/local/bin/node', ...baseSpec.args]);
  });

  it('passes a path longer than a literal may be as a parameter, and writes every shorter one', () => {
    const long = `/opt/${'a'.repeat(600)}/lib`;
    const realpath = fakeMacRealpath({ existing: ['/usr/local/bin/node', long, '/private/tmp/w'] });
    const { parameters, rules } = generate(
      { ...baseSpec, runtimePaths: [long], workspace: '/tmp/w' },
      { realpath },
    );
    expect(Object.values(parameters)).toEqual([long, `/opt/${'a'.repeat(600)}`]);
    expect(pathFiltersFor(rules, 'file-read-data', parameters)).toContainEqual({
      kind: 'subpath',
      path: long,
      parameter: 'PATH_0',
    });
    expect(paths(rules, 'file-read-metadata')).toContain('literal /opt');
  });

  it('gives the same text for the same spec, whatever order the runtime paths come in', () => {
    const reversed = { ...baseSpec, runtimePaths: [...baseSpec.runtimePaths].reverse() };
    expect(seatbeltProfile(reversed, { realpath: macRealpath })).toBe(
      seatbeltProfile(baseSpec, { realpath: macRealpath }),
    );
  });

  it('ignores limits, which the launcher applies, but checks the rest of the spec as every backend does', () => {
    expect(() =>
      seatbeltProfile({ ...baseSpec, limits: { processes: 10, memoryBytes: 1 } }, { realpath: macRealpath }),
    ).not.toThrow();
    const malformed: unknown[] = [
      { ...baseSpec, runtimePaths: 'opt' },
      { ...baseSpec, network: 'internet' },
      { ...baseSpec, args: [1] },
      null,
    ];
    for (const spec of malformed) {
      expect(() => seatbeltProfile(spec as SandboxSpawnSpec, { realpath: macRealpath })).toThrow(
        ConfigurationError,
      );
    }
  });

  it('refuses relative paths, the root as workspace, names macOS cannot hold, and paths it cannot resolve', () => {
    const cases: [Partial<SandboxSpawnSpec>, SeatbeltProfileOptions, RegExp][] = [
      [{ runtimePaths: ['opt/ghost'] }, {}, /runtimePaths\[0\] must be an absolute path/],
      [{ workspace: '/private/../' }, {}, /workspace is the root directory/],
      [
        { runtimePaths: [`/opt/${'x'.repeat(1100)}`] },
        {},
        /1105 bytes long once resolved; macOS accepts at most 1023/,
      ],
      [{ runtimePaths: ['/opt/\ud800agent'] }, {}, /not valid Unicode/],
      [{}, { sharedLibraries: ['lib/libx.dylib'] }, /sharedLibraries\[0\] must be an absolute path/],
      [
        {},
        {
          realpath: () => {
            throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
          },
        },
        /command "\/usr\/local\/bin\/node" could not be resolved: EACCES/,
      ],
      [
        {},
        { realpath: () => 'relative/node' },
        /resolved to "relative\/node", which is not an absolute path/,
      ],
    ];
    for (const [change, options, message] of cases) {
      const attempt = () =>
        seatbeltProfile({ ...baseSpec, ...change }, { realpath: macRealpath, ...options });
      expect(attempt).toThrow(ConfigurationError);
      expect(attempt).toThrow(message);
    }
  });
});

describe('seatbeltArguments', () => {
  it('is -p with the profile, the parameter definitions, --, then the command and its arguments', () => {
    const options = { realpath: macRealpath };
    expect(sandboxExecPath).toBe('/usr/bin/sandbox-exec');
    expect(seatbeltArguments(baseSpec, options)).toEqual([
      '-p',
      seatbeltProfile(baseSpec, options),
      '--',
      '/usr/local/bin/node',
      '/opt/ghost/host/host.js',
      '--engine=quickjs',
    ]);
  });
});
