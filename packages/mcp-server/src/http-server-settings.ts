import { ConfigurationError } from '@ghost/core';
import type { CodeModeMcpHttpOptions } from './code-mode-mcp-http.js';
import { loopbackHostNames } from './request-origin-check.js';

/** The options of `listenCodeModeMcpHttp()`, checked and with their defaults filled in. */
export interface HttpServerSettings {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** `sessionIdleSeconds` in milliseconds. */
  readonly sessionIdleMs: number;
  readonly allowedHostNames: readonly string[];
}

/** Checks the options and fills in their defaults, throwing a `ConfigurationError` for a bad number. */
export function resolveHttpServerSettings(options: CodeModeMcpHttpOptions): HttpServerSettings {
  checkPositiveInteger(options.port, 'port', true);
  checkPositiveInteger(options.maxSessions, 'maxSessions');
  checkPositiveInteger(options.sessionIdleSeconds, 'sessionIdleSeconds');
  checkPositiveInteger(options.maxSessionsPerClient, 'maxSessionsPerClient');
  checkPositiveInteger(options.headersTimeoutMs, 'headersTimeoutMs');
  checkPositiveInteger(options.idleTimeoutMs, 'idleTimeoutMs');
  const host = options.host ?? '127.0.0.1';
  return {
    host,
    port: options.port ?? 0,
    path: options.path ?? '/mcp',
    maxSessions: options.maxSessions ?? 32,
    maxSessionsPerClient: options.maxSessionsPerClient ?? 8,
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    sessionIdleMs: (options.sessionIdleSeconds ?? 1_800) * 1000,
    allowedHostNames: options.allowedHostNames ?? [
      ...loopbackHostNames,
      ...(host.includes(':') ? [`[${host}]`] : [host]),
    ],
  };
}

function checkPositiveInteger(value: number | undefined, name: string, allowZero = false): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ConfigurationError(
      `listenCodeModeMcpHttp(): ${name} is a whole number ${allowZero ? 'of 0 or more' : 'greater than 0'}, not ${String(value)}.`,
      { code: 'GHOST_MCP_HTTP_OPTION_INVALID', option: name },
    );
  }
}
