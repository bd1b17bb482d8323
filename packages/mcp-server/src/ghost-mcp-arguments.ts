import { GhostMcpConfigError } from './ghost-mcp-config-error.js';

/** What the `ghost-mcp` command line asks for. */
export interface GhostMcpArguments {
  /** The config file. Default `ghost-mcp.json` in the current directory. */
  readonly configPath: string;
  /** Serve Streamable HTTP instead of stdio. */
  readonly isHttp: boolean;
  readonly port?: number;
  readonly host?: string;
  readonly isHelp: boolean;
}

/** The usage text of `ghost-mcp --help`. */
export const ghostMcpUsage = `Usage: ghost-mcp [--config ghost-mcp.json] [--http [--port N] [--host 127.0.0.1]]

Serves Ghost's sandboxed code mode (exec, wait, stop) over MCP: stdio by default, Streamable
HTTP with --http. The config file names the MCP servers whose tools programs may call.`;

function invalid(message: string): never {
  throw new GhostMcpConfigError(`${message} ${ghostMcpUsage.split('\n')[0]}`, {
    code: 'GHOST_MCP_ARGUMENTS_INVALID',
  });
}

/** Reads `ghost-mcp`'s flags; a flag it does not know throws a {@link GhostMcpConfigError}. */
export function parseGhostMcpArguments(argv: readonly string[]): GhostMcpArguments {
  let configPath = 'ghost-mcp.json';
  let isHttp = false;
  let isHelp = false;
  let port: number | undefined;
  let host: string | undefined;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    const [flag, inlineValue] =
      argument.startsWith('--') && argument.includes('=')
        ? [argument.slice(0, argument.indexOf('=')), argument.slice(argument.indexOf('=') + 1)]
        : [argument, undefined];
    const value = (): string => {
      if (inlineValue !== undefined) return inlineValue;
      const next = argv[index + 1];
      if (next === undefined || next.startsWith('--')) invalid(`${flag} needs a value.`);
      index += 1;
      return next;
    };
    switch (flag) {
      case '--config':
        configPath = value();
        break;
      case '--http':
        isHttp = true;
        break;
      case '--port': {
        const text = value();
        port = Number(text);
        if (!/^\d+$/.test(text) || port > 65_535)
          invalid(`--port is a whole number from 0 to 65535, not '${text}'.`);
        break;
      }
      case '--host':
        host = value();
        break;
      case '--help':
      case '-h':
        isHelp = true;
        break;
      default:
        invalid(`Unknown argument '${argument}'.`);
    }
  }
  if ((port !== undefined || host !== undefined) && !isHttp) invalid('--port and --host go with --http.');
  return {
    configPath,
    isHttp,
    isHelp,
    ...(port === undefined ? {} : { port }),
    ...(host === undefined ? {} : { host }),
  };
}
