import { describe, expect, it } from 'vitest';
import { parseGhostMcpArguments } from './ghost-mcp-arguments.js';

describe('parseGhostMcpArguments', () => {
  it('defaults to stdio and ghost-mcp.json', () => {
    expect(parseGhostMcpArguments([])).toEqual({
      configPath: 'ghost-mcp.json',
      isHttp: false,
      isHelp: false,
    });
  });

  it('reads --config, --http, --port and --host, with or without =', () => {
    expect(parseGhostMcpArguments(['--config', 'a.json', '--http', '--port=3917', '--host', '::1'])).toEqual({
      configPath: 'a.json',
      isHttp: true,
      isHelp: false,
      port: 3917,
      host: '::1',
    });
    expect(parseGhostMcpArguments(['--help']).isHelp).toBe(true);
  });

  it('refuses what it does not know, with a typed error', () => {
    const cases: [string[], string][] = [
      [['--verbose'], "Unknown argument '--verbose'"],
      [['--config'], '--config needs a value'],
      [['--http', '--port', 'eighty'], "--port is a whole number from 0 to 65535, not 'eighty'"],
      [['--http', '--port', '70000'], "not '70000'"],
      [['--port', '80'], '--port and --host go with --http'],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseGhostMcpArguments(argv)).toThrow(
        expect.objectContaining({
          code: 'GHOST_MCP_ARGUMENTS_INVALID',
          message: expect.stringContaining(message),
        }),
      );
    }
  });
});
