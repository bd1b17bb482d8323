// markdown-it plugins for the guides: what the site shows differs from the Markdown file in two
// ways, both so the same file reads well on GitHub and on the site.
import { dirname, relative, resolve, sep } from 'node:path';
import type { MarkdownRenderer } from 'vitepress';

/** The line in a ```ts block above which set-up lines are compiled by the snippet check but not shown. */
const cutLine = '// ---cut---';

/**
 * Shows only what follows `// ---cut---` in a code block, and drops the `run` / `fragment` words
 * the snippet check reads from the info string (apps/docs/scripts/check-snippets.mjs).
 */
export function snippetCut(md: MarkdownRenderer): void {
  md.core.ruler.push('ghost-snippet-cut', (state) => {
    for (const token of state.tokens) {
      if (token.type !== 'fence') continue;
      const [language, ...words] = token.info.trim().split(/\s+/);
      if (language === 'ts' && words.every((word) => word === 'run' || word === 'fragment')) {
        token.info = 'ts';
      }
      const lines = token.content.split('\n');
      const cut = lines.findIndex((line) => line.trim() === cutLine);
      if (cut !== -1) token.content = lines.slice(cut + 1).join('\n');
    }
  });
}

/**
 * Links that leave docs/ (`../packages/sandbox-bwrap/README.md`, `../../examples/...`) work on
 * GitHub, where the files sit beside the docs, but the site has no copy of them. We keep them as
 * relative links in the Markdown (no repository URL to hard-code, and they stay right on forks and
 * branches) and rewrite them here instead of telling VitePress to ignore them, so its dead-link
 * check stays on for every link inside docs/:
 * - a package's README is the package's page in the API reference (typedoc renders the README
 *   there, headings and anchors included);
 * - anything else (example sources) becomes its link text, which names the repository path.
 */
export function linksOutsideDocs(docsDirectory: string, referencePageOf: (packageName: string) => string) {
  return (md: MarkdownRenderer): void => {
    md.core.ruler.push('ghost-links-outside-docs', (state) => {
      const file = (state.env as { path?: string }).path;
      if (file === undefined) return;
      for (const block of state.tokens) {
        if (block.type !== 'inline' || block.children === null) continue;
        const kept = [];
        // Links do not nest in Markdown, so the next close after a dropped opening is that link's.
        let isInsideDroppedLink = false;
        for (const token of block.children) {
          if (token.type === 'link_open') {
            const href = token.attrGet('href') ?? '';
            // The reference is not a VitePress page: a full page load, not the router.
            if (href.startsWith('/reference/')) token.attrSet('target', '_self');
            const target = outsideTarget(docsDirectory, file, href);
            if (target !== undefined) {
              const readme = /^packages\/([^/]+)\/README\.md(#.*)?$/.exec(target);
              if (readme !== null) {
                token.attrSet('href', `${referencePageOf(readme[1]!)}${readme[2] ?? ''}`);
                // The reference is not a VitePress page: a full page load, not the router.
                token.attrSet('target', '_self');
              } else {
                isInsideDroppedLink = true;
                continue;
              }
            }
          }
          if (token.type === 'link_close' && isInsideDroppedLink) {
            isInsideDroppedLink = false;
            continue;
          }
          kept.push(token);
        }
        block.children = kept;
      }
    });
  };
}

/** The repository path a relative link points to when that is outside docs/, else undefined. */
function outsideTarget(docsDirectory: string, file: string, href: string): string | undefined {
  if (href === '' || href.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/')) {
    return undefined;
  }
  const [path = '', anchor] = href.split('#', 2);
  const target = resolve(dirname(file), path);
  if (!relative(docsDirectory, target).startsWith(`..${sep}`)) return undefined;
  const fromRoot = relative(resolve(docsDirectory, '..'), target).split(sep).join('/');
  return anchor === undefined ? fromRoot : `${fromRoot}#${anchor}`;
}
