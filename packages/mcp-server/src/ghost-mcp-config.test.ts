import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadGhostMcpConfig, parseGhostMcpConfig } from './ghost-mcp-config.js';
import { GhostMcpConfigError } from './ghost-mcp-config-error.js';

const path = '/home/user/project/ghost-mcp.json';

function problem(json: unknown) {
  try {
    parseGhostMcpConfig(json, path);
  } catch (error) {
    expect(GhostMcpConfigError.isInstance(error)).toBe(true);
    return error as GhostMcpConfigError;
  }
  throw new Error('the config was accepted');
}

describe('parseGhostMcpConfig', () => {
  it('reads servers, tool modules and code mode settings, resolving paths from the file', () => {
    const config = parseGhostMcpConfig(
      {
        servers: {
          files: { command: 'npx', args: ['-y', 'server-filesystem', '.'], env: { TOKEN: 'x' }, cwd: 'data' },
          search: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t' } },
        },
        toolModules: ['./tools.js', '/abs/more.js'],
        engine: 'v8',
        sandbox: 'native',
        placement: 'session',
        limits: { wallSeconds: 900, programs: 50 },
        observationWindowMs: 30_000,
        http: {
          host: '127.0.0.1',
          port: 3917,
          allowedHostNames: ['ghost.local'],
          maxSessions: 16,
          maxSessionsPerClient: 4,
          headersTimeoutMs: 5_000,
          idleTimeoutMs: 20_000,
        },
      },
      path,
    );
    expect(config.servers).toEqual({
      files: {
        command: 'npx',
        args: ['-y', 'server-filesystem', '.'],
        env: { TOKEN: 'x' },
        cwd: '/home/user/project/data',
      },
      search: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t' } },
    });
    expect(config.toolModules).toEqual(['/home/user/project/tools.js', '/abs/more.js']);
    expect(config).toMatchObject({
      engine: 'v8',
      sandbox: 'native',
      placement: 'session',
      limits: { wallSeconds: 900, programs: 50 },
      observationWindowMs: 30_000,
      http: {
        host: '127.0.0.1',
        port: 3917,
        allowedHostNames: ['ghost.local'],
        maxSessions: 16,
        maxSessionsPerClient: 4,
        headersTimeoutMs: 5_000,
        idleTimeoutMs: 20_000,
      },
    });
  });

  it('accepts a server with only a command', () => {
    expect(parseGhostMcpConfig({ servers: { echo: { command: 'echo-server' } } }, path).servers).toEqual({
      echo: { command: 'echo-server', args: [] },
    });
  });

  it('names unknown keys at every level, with the known ones', () => {
    const top = problem({ server: {} });
    expect(top.code).toBe('GHOST_MCP_CONFIG_KEY_UNKNOWN');
    expect(top.message).toContain(path);
    expect(top.message).toContain("no key 'server'");
    expect(top.message).toContain('servers');
    expect(problem({ servers: { a: { command: 'x', argv: [] } } }).message).toContain(
      "servers.a has no key 'argv'",
    );
    expect(problem({ http: { prot: 1 } }).message).toContain("http has no key 'prot'");
    expect(problem({ limits: { wallSecond: 1 } }).message).toContain("limits has no key 'wallSecond'");
  });

  it('says what a server entry needs', () => {
    const cases: [unknown, string][] = [
      [{ a: { command: 'x', url: 'http://h/mcp' } }, 'not both'],
      [{ a: {} }, 'and has neither'],
      [{ a: 'npx server' }, 'is an object'],
      [{ a: { command: '' } }, 'servers.a.command is a non-empty string'],
      [{ a: { command: 'x', args: 'y' } }, 'servers.a.args is a list of strings'],
      [{ a: { command: 'x', env: { N: 1 } } }, 'servers.a.env is an object of strings'],
      [{ a: { url: 'not a url' } }, 'is not a URL'],
      [{ a: { url: 'file:///etc/passwd' } }, 'must be an http: or https: URL'],
      [{ 'two words': { command: 'x' } }, "server name 'two words'"],
    ];
    for (const [servers, message] of cases) {
      const error = problem({ servers });
      expect(error.code).toBe('GHOST_MCP_CONFIG_SERVER_INVALID');
      expect(error.message).toContain(message);
    }
  });

  it('checks the other settings', () => {
    expect(problem([]).message).toContain('is a JSON object');
    expect(problem({ servers: [] }).message).toContain('servers is an object');
    expect(problem({ toolModules: 'tools.js' }).message).toContain('toolModules is a list of strings');
    expect(problem({ placement: 'everywhere' }).message).toContain(
      'placement is "process", "session" or "thread"',
    );
    expect(problem({ limits: { wallSeconds: -1 } }).message).toContain(
      'limits.wallSeconds is a number greater than 0',
    );
    expect(problem({ http: { port: 70_000 } }).message).toContain(
      'http.port is a whole number from 0 to 65535',
    );
    expect(problem({ http: { maxSessionsPerClient: 0 } }).message).toContain(
      'http.maxSessionsPerClient is a whole number greater than 0, not 0.',
    );
    expect(problem({ http: { headersTimeoutMs: '10s' } }).message).toContain(
      'http.headersTimeoutMs is a whole number greater than 0, not "10s".',
    );
    expect(problem({ observationWindowMs: 0 }).message).toContain('observationWindowMs');
  });
});

describe('loadGhostMcpConfig', () => {
  it('tells a missing file from a file that is not JSON', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'ghost-mcp-config-'));
    try {
      await expect(loadGhostMcpConfig(join(directory, 'missing.json'))).rejects.toMatchObject({
        code: 'GHOST_MCP_CONFIG_NOT_FOUND',
      });
      const broken = join(directory, 'broken.json');
      await writeFile(broken, '{ "servers": {}, // a comment\n}');
      await expect(loadGhostMcpConfig(broken)).rejects.toMatchObject({
        code: 'GHOST_MCP_CONFIG_JSON_INVALID',
        message: expect.stringContaining('JSON has no comments or trailing commas'),
      });
      const good = join(directory, 'good.json');
      await writeFile(good, JSON.stringify({ toolModules: ['./tools.js'] }));
      expect((await loadGhostMcpConfig(good)).toolModules).toEqual([join(directory, 'tools.js')]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
