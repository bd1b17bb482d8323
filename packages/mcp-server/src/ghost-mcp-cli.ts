#!/usr/bin/env node
// `ghost-mcp`: serves code mode over MCP (stdio, or Streamable HTTP with --http). Standard output
// belongs to the protocol over stdio, so everything this command says goes to standard error.
import { GhostError } from '@ghost/core';
import { startGhostMcp } from './ghost-mcp.js';
import { ghostMcpUsage, parseGhostMcpArguments } from './ghost-mcp-arguments.js';

function report(error: unknown): void {
  const text = GhostError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
  process.stderr.write(`ghost-mcp: ${text}\n`);
}

try {
  const args = parseGhostMcpArguments(process.argv.slice(2));
  if (args.isHelp) {
    process.stderr.write(`${ghostMcpUsage}\n`);
  } else {
    const running = await startGhostMcp(args);
    const stopOnSignal = () => {
      running.stop().catch(() => {}); // reported through `stopped` below
    };
    process.once('SIGINT', stopOnSignal);
    process.once('SIGTERM', stopOnSignal);
    await running.stopped;
    // Everything this process started has ended; stop waiting for stray handles such as stdin.
    process.exit(0);
  }
} catch (error) {
  report(error);
  process.exit(GhostError.isInstance(error) && error.code === 'GHOST_MCP_ARGUMENTS_INVALID' ? 2 : 1);
}
