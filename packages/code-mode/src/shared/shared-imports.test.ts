import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// shared/ and host/ are bundled into the sandboxed host; what they import must not pull the
// parent's code (parent/) in with them.
const folders = ['shared', 'host'] as const;

function importsOf(folder: string): { file: string; specifier: string }[] {
  const directory = fileURLToPath(new URL(`../${folder}/`, import.meta.url));
  const found: { file: string; specifier: string }[] = [];
  for (const file of readdirSync(directory)) {
    if (!/\.(ts|mjs)$/.test(file) || file.endsWith('.test.ts')) continue;
    const text = readFileSync(`${directory}${file}`, 'utf8');
    for (const match of text.matchAll(/from '([^']+)'/g)) found.push({ file, specifier: match[1] ?? '' });
  }
  return found;
}

describe('code bundled into the host', () => {
  it.each(folders)('%s/ imports nothing from parent/', (folder) => {
    const fromParent = importsOf(folder).filter(({ specifier }) => specifier.includes('/parent/'));
    expect(fromParent).toEqual([]);
  });
});
