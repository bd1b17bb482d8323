import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The file a request path names inside `directory`, or undefined for one that leaves it. */
export function filePathOf(directory: string, urlPath: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (path.includes('\0')) return undefined;
  const relative = normalize(path === '/' ? '/index.html' : path).replace(/^([/\\])+/, '');
  if (relative.split(sep).includes('..')) return undefined;
  return join(directory, relative);
}

/**
 * Serves the built page from `directory` (Vite's `dist/client`): `GET` and `HEAD` only, nothing
 * outside the folder, 404 for what is not there. Hashed assets are cached for a year.
 */
export async function serveStaticFile(
  directory: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const urlPath = new URL(request.url ?? '/', 'http://localhost').pathname;
  const path = filePathOf(directory, urlPath);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  const found = path === undefined ? undefined : await stat(path).catch(() => undefined);
  if (path === undefined || found === undefined || !found.isFile()) {
    response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found.\n');
    return;
  }
  response.writeHead(200, {
    'Content-Type': contentTypes[extname(path)] ?? 'application/octet-stream',
    'Content-Length': found.size,
    'Cache-Control': urlPath.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  createReadStream(path).pipe(response);
}
