import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filePathOf, serveStaticFile } from './static-files.js';

describe('the built page', () => {
  let folder = '';
  let server: Server;
  let url = '';

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'ghost-chat-web-static-'));
    const site = join(folder, 'site');
    await mkdir(join(site, 'assets'), { recursive: true });
    await writeFile(join(site, 'index.html'), '<!doctype html><title>chat</title>');
    await writeFile(join(site, 'assets', 'main-1a2b.js'), 'console.log(1);');
    // Beside the served folder: a request must never reach it.
    await writeFile(join(folder, 'secret.txt'), 'not for the browser');
    server = createServer((request, response) => void serveStaticFile(site, request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(folder, { recursive: true, force: true });
  });

  it('serves the page at / and its hashed assets for a year', async () => {
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<title>chat</title>');
    const script = await fetch(`${url}/assets/main-1a2b.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toContain('immutable');
  });

  it('serves nothing outside its folder, and only to GET and HEAD', async () => {
    expect((await fetch(`${url}/%2e%2e/secret.txt`)).status).toBe(404);
    expect((await fetch(`${url}/..%2fsecret.txt`)).status).toBe(404);
    expect((await fetch(`${url}/missing.js`)).status).toBe(404);
    expect((await fetch(`${url}/`, { method: 'POST' })).status).toBe(405);
    // A path that climbs stops at the folder's top.
    expect(filePathOf('/srv/site', '/../secret.txt')).toBe('/srv/site/secret.txt');
    expect(filePathOf('/srv/site', '/a%00.js')).toBeUndefined();
    expect(filePathOf('/srv/site', '/assets/a.js')).toBe('/srv/site/assets/a.js');
  });
});
