// The snippet check (scripts/check-snippets.mjs) on small docs folders of its own: what it reports,
// where, and that it leaves no temporary project behind.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const appDirectory = fileURLToPath(new URL('..', import.meta.url));
const script = join(appDirectory, 'scripts', 'check-snippets.mjs');
const fence = '```';
const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function docsWith(markdown: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'ghost-snippet-docs-'));
  folders.push(folder);
  await writeFile(join(folder, 'guide.md'), markdown);
  return folder;
}

async function temporaryProjects(): Promise<string[]> {
  return (await readdir(appDirectory)).filter((name) => name.startsWith('.snippets-'));
}

function check(docs: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, docs], { timeout: 100_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr });
    });
  });
}

describe('check-snippets', () => {
  it('reports a type error at its line in the Markdown, skips fragments, and removes its project', async () => {
    const before = await temporaryProjects();
    const docs = await docsWith(
      [
        '# A guide', //                                   1
        '', //                                            2
        `${fence}ts`, //                                  3
        "import { defineAgent } from '@ghost/core';", //  4
        '// ---cut---', //                                5
        "const count: number = 'three';", //              6
        'console.log(count, defineAgent);', //            7
        fence,
        '',
        `${fence}ts fragment`,
        'declare const shown: NotAType;',
        fence,
      ].join('\n'),
    );
    const { code, output } = await check(docs);
    expect(code).toBe(1);
    expect(output).toMatch(/guide\.md:6:7: error TS2322/);
    expect(output).not.toContain('NotAType');
    expect(await temporaryProjects()).toEqual(before);
  });

  it('runs the blocks marked run, and reports one that exits non-zero at its fence', async () => {
    const docs = await docsWith(
      [
        '# A guide',
        '',
        `${fence}ts run`, // 3
        "import { defineAgent } from '@ghost/core';",
        "console.log(typeof defineAgent === 'function');",
        fence,
        '',
        `${fence}ts run`, // 8
        "console.error('no model here');",
        'process.exitCode = 3;',
        fence,
        '',
        `${fence}ts`, // 13: type-checked, not run
        'process.exit(4);',
        fence,
      ].join('\n'),
    );
    const { code, output } = await check(docs);
    expect(code).toBe(1);
    expect(output).toContain('guide.md:8: the example exited 3');
    expect(output).toContain('no model here');
    expect(output).not.toContain('guide.md:3:');
    expect(output).not.toContain('guide.md:13');
    expect(output).toContain('1 of 2 runnable examples failed');
  });

  it('passes when every example type-checks and every runnable one exits 0, and removes its project', async () => {
    const before = await temporaryProjects();
    const docs = await docsWith(
      [
        `${fence}ts run`,
        "import { ScriptedModel } from '@ghost/core/testing';",
        'new ScriptedModel([]);',
        fence,
      ].join('\n'),
    );
    const { code, output } = await check(docs);
    expect(output).toContain('1 examples type-check, 1 run.');
    expect(code).toBe(0);
    expect(await temporaryProjects()).toEqual(before);
  });
});
