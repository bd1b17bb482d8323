// The documentation site: the Markdown in the repository's docs/ folder (guides stay where GitHub
// shows them), built by VitePress into apps/docs/dist/, with typedoc's API reference built into
// dist/reference/ after it (package.json's `docs` script).
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitepress';
import { linksOutsideDocs, snippetCut } from './markdown-plugins.mjs';
import { sidebar } from './sidebar.mjs';

const docsDirectory = fileURLToPath(new URL('../../../docs', import.meta.url));

/**
 * The pages live in the repository's docs/, outside this package, and pnpm installs `vue` only
 * where it is declared: the compiled pages' `vue` imports are resolved from here instead.
 */
const vueFromThisPackage: Plugin = {
  name: 'ghost-vue-from-docs-app',
  enforce: 'pre',
  resolveId(source, importer) {
    if (!/^vue($|\/)/.test(source) || importer === undefined || !importer.startsWith(docsDirectory))
      return null;
    return this.resolve(source, fileURLToPath(import.meta.url), { skipSelf: true });
  },
};

/** Where typedoc puts a package's page (its README), (typedoc names it from the package name). */
const referencePageOf = (packageName: string): string => `/reference/modules/_ghost_${packageName}.html`;

export default defineConfig({
  title: 'Ghost',
  description: 'The TypeScript agent framework with sandboxed code mode.',
  // An icon of its own, so browsers do not ask for a /favicon.ico the site does not have.
  head: [
    [
      'link',
      {
        rel: 'icon',
        href: "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text y='.9em' font-size='90'>👻</text></svg>",
      },
    ],
  ],
  srcDir: docsDirectory,
  outDir: 'dist',
  // The API reference is typedoc's, written into dist/reference/ after this build, so VitePress
  // cannot see its pages; the browser test (src/site.test.ts) checks every link into it.
  ignoreDeadLinks: [/^\/reference\//],
  vite: { plugins: [vueFromThisPackage] },
  markdown: {
    config(md) {
      md.use(snippetCut);
      md.use(linksOutsideDocs(docsDirectory, referencePageOf));
    },
  },
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/guides/getting-started' },
      { text: 'Architecture', link: '/architecture' },
      { text: 'Decisions', link: '/decisions/2026-12-02-source-export-condition' },
      // Not a VitePress page: `target` makes it a full page load instead of a client-side route.
      { text: 'API reference', link: '/reference/index.html', target: '_self' },
    ],
    sidebar: sidebar(docsDirectory),
    search: { provider: 'local' },
    outline: [2, 3],
  },
});
