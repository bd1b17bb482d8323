import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ServerActivity, startChatServer } from './chat-server.js';

/**
 * Where conversations are kept: `--sessions PATH`, else `GHOST_CHAT_SESSIONS`, else
 * `$XDG_STATE_HOME/ghost/chat-web.db` (`~/.local/state/ghost/...`), which outlives a rebuild.
 */
function sessionsPathOf(chosen: string | undefined, environment: NodeJS.ProcessEnv): string {
  const path = chosen?.trim() || environment.GHOST_CHAT_SESSIONS?.trim();
  if (path) return path;
  const stateHome = environment.XDG_STATE_HOME?.trim() || join(homedir(), '.local', 'state');
  return join(stateHome, 'ghost', 'chat-web.db');
}

function describe(activity: ServerActivity): string {
  if (activity.kind === 'run') return `run on thread ${activity.threadId}: ${activity.outcome}`;
  if (activity.tool === 'refund_order') return `refund_order: order ${activity.order} refunded`;
  return `sales_report: ${activity.status}`;
}

const { values } = parseArgs({
  options: {
    dev: { type: 'boolean', default: false },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: process.env.PORT ?? '3000' },
    sessions: { type: 'string' },
  },
});
const sessionsPath = sessionsPathOf(values.sessions, process.env);
mkdirSync(dirname(sessionsPath), { recursive: true });
const server = await startChatServer({
  sessionsPath,
  client: values.dev ? 'vite' : 'built',
  host: values.host,
  port: Number(values.port),
  onActivity: (activity) =>
    console.log(`  [${new Date().toISOString().slice(11, 19)}] ${describe(activity)}`),
});
console.log(`Ghost chat-web ${values.dev ? '(dev: Vite serves the page from src/client)' : ''}`.trim());
console.log(server.model.description);
console.log(
  `Conversations are kept in ${sessionsPath} (--sessions or GHOST_CHAT_SESSIONS picks another file).`,
);
console.log(`Open ${server.url}`);

let signals = 0;
const stop = (signal: string) => {
  signals += 1;
  if (signals > 1) process.exit(1);
  console.log(`\n${signal}: stopping (runs still streaming are cancelled)...`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
