// Checks the TypeScript examples in the docs: every ```ts block in docs/**/*.md (not
// docs/decisions, which record what was true then) is type-checked with tsc (strict) against the
// workspace's built @ghost/* packages, and each ```ts run block is also run with node and must
// exit 0. Failures are reported as docs/<file>.md:<line>.
//
//   node scripts/check-snippets.mjs [docs directory]
//
// Info-string words: `fragment` exempts a block (declarations shown for reading, not a program);
// `run` runs it; `file=<name>.ts` names its file, so another block of the same page can import
// it as './<name>.js'. Lines above a `// ---cut---` line are compiled but not shown on the site.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const appDirectory = fileURLToPath(new URL('..', import.meta.url));
const repositoryRoot = join(appDirectory, '..', '..');
const docsDirectory = process.argv[2] ?? join(repositoryRoot, 'docs');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const runTimeoutMs = 30_000;

async function markdownFiles(directory) {
  const files = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory() && entry.name !== 'decisions') files.push(...(await markdownFiles(path)));
    else if (entry.isFile() && entry.name.endsWith('.md')) files.push(path);
  }
  return files.sort();
}

/** The ```ts blocks of one page; `line` is the fence's line, so snippet line n is page line line + n. */
function snippetsOf(markdown, page, text) {
  const snippets = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const fence = /^(\s*)(`{3,})\s*(\S*)\s*(.*)$/.exec(lines[index]);
    if (fence === null) continue;
    const [, , ticks, language, rest] = fence;
    const start = index;
    const body = [];
    for (index += 1; index < lines.length && !lines[index].trimStart().startsWith(ticks); index += 1) {
      body.push(lines[index]);
    }
    if (language !== 'ts') continue;
    const words = rest.split(/\s+/).filter(Boolean);
    if (words.includes('fragment')) continue;
    const named = words.find((word) => word.startsWith('file='));
    snippets.push({
      markdown,
      page,
      line: start + 1,
      words,
      source: body.join('\n'),
      file: named === undefined ? `snippet-${start + 1}.ts` : named.slice('file='.length),
    });
  }
  return snippets;
}

function run(command, args, options) {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : (error.code ?? 1),
        killed: error?.killed === true,
        stdout,
        stderr,
      });
    });
  });
}

/** tsc's `dir/snippet-12.ts(3,7): error TS...` lines, pointed at the Markdown line they came from. */
function pointAtMarkdown(output, snippetByPath) {
  return output
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const match = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
      const snippet = match && snippetByPath.get(match[1]);
      if (!snippet) return line;
      return `${snippet.markdown}:${snippet.line + Number(match[2])}:${match[3]}: ${match[4]}`;
    })
    .join('\n');
}

async function main() {
  const snippets = [];
  for (const file of await markdownFiles(docsDirectory)) {
    // Named as people find it: from the repository root, or as given for a folder outside it.
    const fromRoot = relative(repositoryRoot, file);
    const markdown = fromRoot.startsWith('..') ? file : fromRoot;
    const page = relative(docsDirectory, file).replace(/\.md$/, '');
    snippets.push(...snippetsOf(markdown, page, await readFile(file, 'utf8')));
  }
  // Inside this package, so the snippets resolve @ghost/* and the rest through its node_modules.
  const project = await mkdtemp(join(appDirectory, '.snippets-'));
  try {
    const snippetByPath = new Map();
    for (const snippet of snippets) {
      // One folder per page, so a page's blocks can import each other by file name.
      const path = join(snippet.page, snippet.file);
      snippetByPath.set(path, snippet);
      await mkdir(join(project, dirname(path)), { recursive: true });
      // `export {}` makes each block a module: top-level await works and names stay its own.
      await writeFile(join(project, path), `${snippet.source}\nexport {};\n`);
    }
    await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          skipLibCheck: true,
          outDir: 'out',
          rootDir: '.',
        },
        include: ['**/*.ts'],
        exclude: ['out'],
      }),
    );
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: project,
    });
    if (compiled.code !== 0) {
      console.error(pointAtMarkdown(compiled.stdout + compiled.stderr, snippetByPath));
      console.error(`check-snippets: the examples above do not type-check (${snippets.length} checked).`);
      return 1;
    }
    let failures = 0;
    const runnable = [...snippetByPath].filter(([, snippet]) => snippet.words.includes('run'));
    for (const [path, snippet] of runnable) {
      const script = join(project, 'out', path.replace(/\.ts$/, '.js'));
      const result = await run(process.execPath, [script], { cwd: project, timeout: runTimeoutMs });
      if (result.code !== 0) {
        failures += 1;
        const why = result.killed
          ? `did not finish within ${runTimeoutMs / 1000} s`
          : `exited ${result.code}`;
        console.error(
          `${snippet.markdown}:${snippet.line}: the example ${why}\n${result.stdout}${result.stderr}`,
        );
      }
    }
    if (failures > 0) {
      console.error(`check-snippets: ${failures} of ${runnable.length} runnable examples failed.`);
      return 1;
    }
    console.log(`check-snippets: ${snippets.length} examples type-check, ${runnable.length} run.`);
    return 0;
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}

process.exitCode = await main();
