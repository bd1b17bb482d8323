// Writes src/host/guest-prelude-text.ts from src/host/guest-prelude.mjs: the prelude's function as
// the expression the engines evaluate, in a string, so the build (and a bundled host) carries it
// with no file to read at run time. The package's build runs it; `--check` only says whether the
// written file is current (a test runs that). See docs/architecture.md ("The guest API").
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const sourcePath = fileURLToPath(new URL('../src/host/guest-prelude.mjs', import.meta.url));
const targetPath = fileURLToPath(new URL('../src/host/guest-prelude-text.ts', import.meta.url));
const marker = 'export default function installGuestApi(';

/** The prelude's function as an expression, or an error that says what to fix in the file. */
function preludeExpression(source) {
  const start = source.indexOf(marker);
  if (start === -1 || source.indexOf(marker, start + 1) !== -1) {
    throw new Error(`${sourcePath} must export the prelude exactly once, as \`${marker}...)\`.`);
  }
  // The function is sent alone, so anything else in the module would be missing in the engine.
  const before = source
    .slice(0, start)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .trim();
  if (before !== '') {
    throw new Error(
      `${sourcePath} may hold only comments before the prelude's function, found: ${before.slice(0, 80)}`,
    );
  }
  return `(${source.slice(start + 'export default '.length).trim()})`;
}

/** The text as the body of a template literal. */
function templateBody(text) {
  return text.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${');
}

const expression = preludeExpression(readFileSync(sourcePath, 'utf8'));
const generated = `// Generated from guest-prelude.mjs by scripts/inline-guest-prelude.mjs, which the build runs: edit that file, not this one.

/** The guest prelude's source: an expression whose value is the function \`guest-prelude.mjs\` exports. */
export const guestPreludeText = \`${templateBody(expression)}\`;
`;

let current;
try {
  current = readFileSync(targetPath, 'utf8');
} catch {
  current = undefined;
}
if (process.argv.includes('--check')) {
  if (current !== generated) {
    console.error(
      `${targetPath} is out of date with guest-prelude.mjs: run \`pnpm build\` in packages/code-mode.`,
    );
    process.exit(1);
  }
} else if (current !== generated) {
  writeFileSync(targetPath, generated);
}
