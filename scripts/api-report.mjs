#!/usr/bin/env node
// Writes or checks the API report of every public entry point of the published packages: one
// `packages/<package>/api/<entry>.api.md` per entry in `exports` (see CONTRIBUTING.md).
//
//   node scripts/api-report.mjs update [package-dir...]   rewrite the reports (from built dist/)
//   node scripts/api-report.mjs check  [package-dir...]   fail when a report is out of date
//
// Without package directories it works on every package under packages/. Run from a package's
// directory with no arguments (its `check:api` script) it works on that package alone.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [mode, ...requested] = process.argv.slice(2);
if (mode !== 'update' && mode !== 'check') {
  console.error('usage: node scripts/api-report.mjs update|check [package-dir...]');
  process.exit(2);
}

function packageDirectories() {
  if (requested.length > 0) return requested.map((directory) => path.resolve(directory));
  const here = process.cwd();
  if (path.dirname(here) === path.join(repositoryRoot, 'packages')) return [here];
  const packagesRoot = path.join(repositoryRoot, 'packages');
  return readdirSync(packagesRoot)
    .map((name) => path.join(packagesRoot, name))
    .filter((directory) => existsSync(path.join(directory, 'package.json')));
}

/** The entries whose types are a declaration file: `.` → `index`, `./testing` → `testing`. */
function publicEntries(manifest) {
  const entries = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target !== 'object' || typeof target.types !== 'string') continue;
    const reportName = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
    entries.push({ subpath, reportName, declarations: target.types });
  }
  return entries;
}

function extract(directory, manifest, entry) {
  const reportFolder = path.join(directory, 'api');
  mkdirSync(reportFolder, { recursive: true });
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: directory,
      mainEntryPointFilePath: path.join(directory, entry.declarations),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2023',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.reportName}.api.md`,
        reportFolder,
        reportTempFolder: path.join(directory, 'node_modules', '.cache', 'api-report'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        // The report records these (a type reachable from an entry but exported elsewhere is
        // deliberate: each audience has its own entry); they are for the reviewer, not failures.
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          // Raised for a dependency's own declarations (piscina's import of its package.json); it
          // is not our API, and its message carries the checkout's absolute path, which made the
          // report differ between clones.
          'ae-wrong-input-file-type': { logLevel: 'none', addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: path.join(directory, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: mode === 'update',
    showVerboseMessages: false,
    messageCallback(message) {
      if (message.logLevel === ExtractorLogLevel.Warning || message.logLevel === ExtractorLogLevel.Error) {
        console.error(`${manifest.name} ${entry.subpath}: ${message.text}`);
      }
      message.handled = true;
    },
  });
  return result;
}

let outdated = 0;
let failed = 0;
for (const directory of packageDirectories()) {
  const manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8'));
  if (manifest.private) continue;
  for (const entry of publicEntries(manifest)) {
    if (!existsSync(path.join(directory, entry.declarations))) {
      console.error(
        `${manifest.name} ${entry.subpath}: ${entry.declarations} is missing; build the package first.`,
      );
      failed += 1;
      continue;
    }
    const result = extract(directory, manifest, entry);
    const report = path.relative(repositoryRoot, path.join(directory, 'api', `${entry.reportName}.api.md`));
    if (result.apiReportChanged) {
      if (mode === 'check') {
        outdated += 1;
        console.error(
          `${report} is out of date: the public API of ${manifest.name}${entry.subpath.slice(1)} changed.`,
        );
      } else console.log(`updated ${report}`);
    } else if (!result.succeeded) failed += 1;
  }
}
if (outdated > 0) {
  console.error(
    'Review the change, then run `pnpm api:update` and commit the reports (see CONTRIBUTING.md).',
  );
}
process.exit(outdated > 0 || failed > 0 ? 1 : 0);
