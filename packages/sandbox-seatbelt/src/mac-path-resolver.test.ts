import { ConfigurationError } from '@ghost/core';
import { describe, expect, it } from 'vitest';
import { defaultRealpath, MacPathResolver } from './mac-path-resolver.js';
import { fakeMacRealpath } from './test-support/fake-mac-realpath.js';

const missingEverywhere = () => {
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};

describe('MacPathResolver', () => {
  const mac = fakeMacRealpath({
    existing: ['/Users/dev/releases/v2/host', '/private/var/folders/zz/abc/T', '/opt/app'],
    links: { '/Users/dev/current': 'releases/v2', '/opt/loop-a': '/opt/loop-b', '/opt/loop-b': 'loop-a' },
  });

  it('follows macOS links to /private: /tmp, /var and /etc, on a Mac and when nothing can be looked up', () => {
    for (const realpath of [mac, missingEverywhere]) {
      const resolver = new MacPathResolver(realpath);
      expect(resolver.canonical('/tmp/ghost-1', 'workspace')).toBe('/private/tmp/ghost-1');
      expect(resolver.canonical('/var/folders/zz/abc/T/ghost-2', 'workspace')).toBe(
        '/private/var/folders/zz/abc/T/ghost-2',
      );
      expect(resolver.canonical('/etc', 'runtimePaths[0]')).toBe('/private/etc');
      expect(resolver.canonical('/tmpfiles/x', 'runtimePaths[0]')).toBe('/tmpfiles/x');
    }
  });

  it('leaves no //, /./ or trailing / (filters holding them match nothing)', () => {
    const resolver = new MacPathResolver(missingEverywhere);
    expect(resolver.canonical('//opt/./app//lib/', 'runtimePaths[0]')).toBe('/opt/app/lib');
    expect(resolver.canonical('/', 'runtimePaths[0]')).toBe('/');
    expect(resolver.canonical('/./', 'runtimePaths[0]')).toBe('/');
  });

  it('resolves .. after a link where the link points, as the kernel does, not by dropping the link', () => {
    const resolver = new MacPathResolver(mac);
    expect(resolver.canonical('/Users/dev/current/host', 'runtimePaths[0]')).toBe(
      '/Users/dev/releases/v2/host',
    );
    expect(resolver.canonical('/Users/dev/current/../x', 'runtimePaths[0]')).toBe('/Users/dev/releases/x');
  });

  it('resolves a path that does not exist yet as far as it exists, and takes the rest as written', () => {
    const resolver = new MacPathResolver(mac);
    expect(resolver.canonical('/Users/dev/current/new/dir', 'workspace')).toBe(
      '/Users/dev/releases/v2/new/dir',
    );
    expect(resolver.canonical('/nowhere/at/all', 'workspace')).toBe('/nowhere/at/all');
  });

  it('names each link on the way where it is, with its directory resolved', () => {
    const resolver = new MacPathResolver(mac);
    expect(resolver.symlinksOnTheWay('/var/folders/zz/abc/T', 'workspace')).toEqual(['/var']);
    expect(resolver.symlinksOnTheWay('/Users/dev/current/host', 'runtimePaths[0]')).toEqual([
      '/Users/dev/current',
    ]);
    expect(resolver.symlinksOnTheWay('/opt/app', 'runtimePaths[0]')).toEqual([]);
  });

  it('asks realpath once per path, however often the profile needs it', () => {
    const counted = fakeMacRealpath({ existing: ['/opt/app/lib'] });
    const resolver = new MacPathResolver(counted);
    resolver.canonical('/opt/app/lib', 'runtimePaths[0]');
    resolver.symlinksOnTheWay('/opt/app/lib', 'runtimePaths[0]');
    resolver.canonical('/opt/app/lib', 'runtimePaths[1]');
    expect(counted.asked.filter((path) => path === '/opt/app/lib')).toHaveLength(1);
  });

  it('refuses a cycle of links, a relative path, a lone surrogate and a path over 1023 bytes, naming the field', () => {
    const resolver = new MacPathResolver(mac);
    const cases: [string, RegExp][] = [
      ['/opt/loop-a/x', /runtimePaths\[2\] "\/opt\/loop-a\/x" could not be resolved: ELOOP/],
      ['opt/app', /runtimePaths\[2\] must be an absolute path starting with '\/', got "opt\/app"/],
      ['/opt/\udc00', /runtimePaths\[2\] .* is not valid Unicode/],
      [
        `/opt/${'é'.repeat(510)}`,
        /runtimePaths\[2\] is 1025 bytes long once resolved; macOS accepts at most 1023/,
      ],
    ];
    for (const [path, message] of cases) {
      expect(() => resolver.canonical(path, 'runtimePaths[2]')).toThrow(ConfigurationError);
      expect(() => resolver.canonical(path, 'runtimePaths[2]')).toThrow(message);
    }
    expect(resolver.canonical(`/opt/${'é'.repeat(509)}`, 'runtimePaths[2]')).toHaveLength(514);
  });
});

describe('defaultRealpath', () => {
  it.skipIf(process.platform === 'darwin')(
    "off macOS resolves nothing, so this machine's own links never reach a Mac's profile (skipped on macOS)",
    () => {
      expect(() => defaultRealpath('/')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
      expect(new MacPathResolver(defaultRealpath).canonical('/var/run/x', 'runtimePaths[0]')).toBe(
        '/private/var/run/x',
      );
    },
  );

  it.runIf(process.platform === 'darwin')(
    "on macOS is the file system's realpath, /tmp leading to /private/tmp (runs on macOS only)",
    () => {
      expect(defaultRealpath('/tmp')).toBe('/private/tmp');
    },
  );
});
