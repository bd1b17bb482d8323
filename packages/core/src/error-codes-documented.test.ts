import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const errorsPage = join(repositoryRoot, 'docs', 'errors.md');

/**
 * Codes that appear where a Ghost code would but belong to something else, with the reason. Node's
 * system codes (`ENOENT`, `ERR_MODULE_NOT_FOUND`) are recognised by their shape instead.
 */
const notGhostCodes: Readonly<Record<string, string>> = {
  TIMEOUT: "the sandbox testkit's network probe rejects with it inside the sandboxed program it runs",
};
const nodeSystemCode = /^(E[A-Z]+|ERR_[A-Z0-9_]+)$/;

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      // Test fixtures stand in for the outside world (fake file systems, fake servers).
      if (entry.name !== 'test-support' && entry.name !== 'node_modules') files.push(...sourceFiles(path));
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.test.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      files.push(path);
    }
  }
  return files;
}

/** Drops comments, whose examples (`code: 'INVOICE_MISSING'`) are not codes Ghost throws. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function packageSourceFiles(): string[] {
  const packagesDirectory = join(repositoryRoot, 'packages');
  return readdirSync(packagesDirectory).flatMap((packageName) => {
    const sourceDirectory = join(packagesDirectory, packageName, 'src');
    return existsSync(sourceDirectory) ? sourceFiles(sourceDirectory) : [];
  });
}

function allSource(): string {
  return packageSourceFiles()
    .map((file) => withoutComments(readFileSync(file, 'utf8')))
    .join('\n');
}

/**
 * Every code string the packages' source gives an error or an error summary: the value of a
 * `code:` property or a `code ??` default, and each member of a type named like `...ErrorCode`
 * (codes handed to a helper that builds the error are listed there).
 */
function codesInSource(): Map<string, string> {
  const codes = new Map<string, string>();
  for (const file of packageSourceFiles()) {
    const source = withoutComments(readFileSync(file, 'utf8'));
    const found: string[] = [];
    for (const match of source.matchAll(/\bcode\s*(?::|\?\?)\s*'([A-Z][A-Z0-9_]+)'/g)) {
      found.push(match[1] as string);
    }
    for (const union of source.matchAll(/\btype\s+\w*Code\b[^=]*=([^;]+);/g)) {
      for (const member of (union[1] as string).matchAll(/'([A-Z][A-Z0-9_]+)'/g)) {
        found.push(member[1] as string);
      }
    }
    for (const code of found) {
      if (nodeSystemCode.test(code) || code in notGhostCodes) continue;
      if (!codes.has(code)) codes.set(code, relative(repositoryRoot, file));
    }
  }
  return codes;
}

/** The codes `docs/errors.md` documents: the first cell of each table row, such as `` `TOOL_ERROR` ``. */
function codesInPage(): Set<string> {
  const page = readFileSync(errorsPage, 'utf8');
  return new Set([...page.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((match) => match[1] as string));
}

describe('docs/errors.md', () => {
  it('documents every error code the packages use, so a new code fails CI until it is written up', () => {
    const documented = codesInPage();
    const sourceCodes = codesInSource();
    // A control: the scan finds the codes it must, so an empty scan cannot pass.
    expect([...sourceCodes.keys()]).toEqual(
      expect.arrayContaining(['CONFIGURATION_INVALID', 'CODE_MODE_HOST_FAILED', 'MCP_CONNECTION_FAILED']),
    );
    const undocumented = [...sourceCodes]
      .filter(([code]) => !documented.has(code))
      .map(([code, file]) => `${code} (${file})`);
    expect(undocumented, 'add a row for each of these codes to docs/errors.md').toEqual([]);
  });

  it('documents no code that the packages no longer use', () => {
    // Looser than the scan above: a documented code only has to appear quoted somewhere in the
    // source, since event codes such as `RUN_FAILED` are chosen in expressions the scan skips.
    const source = allSource();
    const stale = [...codesInPage()].filter((code) => !source.includes(`'${code}'`));
    expect(stale, 'remove these rows from docs/errors.md, or restore their codes').toEqual([]);
  });
});
