// The sidebar's pages. Guides are listed by hand because their order is a reading order; every
// other list is read from the folder. Titles come from each page's first heading.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DefaultTheme } from 'vitepress';

/** The guides in reading order: a new guide in docs/guides/ is added here (the build says so). */
const guides = [
  'getting-started',
  'agents-tools-runs',
  'models-and-providers',
  'code-mode',
  'python-programs',
  'sandboxes',
  'mcp',
  'tracing',
  'ag-ui-and-web-apps',
  'approvals',
  'sessions',
  'multi-agent',
  'session-store',
  'custom-engine',
  'sandbox-backend',
  'benchmarks',
  'production',
];

/** Pages about how Ghost is built, in docs/ itself. */
const referenceMaterial = ['architecture', 'errors', 'scale-out', 'testing'];

/** The page's first `# ` heading, so the sidebar never disagrees with the page. */
function titleOf(docsDirectory: string, page: string): string {
  const source = readFileSync(join(docsDirectory, `${page}.md`), 'utf8');
  const heading = /^# (.+)$/m.exec(source);
  if (heading === null) throw new Error(`docs/${page}.md has no '# ' heading for the sidebar.`);
  return heading[1]!.replaceAll('`', '');
}

function markdownPages(directory: string): string[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.md'))
    .map((name) => name.slice(0, -'.md'.length))
    .sort();
}

/** Fails the build when docs/guides/ and the list above disagree: a guide nobody can find, or a dead entry. */
function checkGuideList(docsDirectory: string): void {
  const onDisk = markdownPages(join(docsDirectory, 'guides'));
  const unlisted = onDisk.filter((guide) => !guides.includes(guide));
  const missing = guides.filter((guide) => !onDisk.includes(guide));
  if (unlisted.length > 0 || missing.length > 0) {
    throw new Error(
      `apps/docs/.vitepress/sidebar.mts lists the guides by hand: ${[
        unlisted.length > 0 ? `add ${unlisted.join(', ')} (in docs/guides/ but not listed)` : '',
        missing.length > 0 ? `remove ${missing.join(', ')} (listed but not in docs/guides/)` : '',
      ]
        .filter(Boolean)
        .join('; ')}.`,
    );
  }
}

export function sidebar(docsDirectory: string): DefaultTheme.SidebarItem[] {
  checkGuideList(docsDirectory);
  const item = (page: string): DefaultTheme.SidebarItem => ({
    text: titleOf(docsDirectory, page),
    link: `/${page}`,
  });
  return [
    { text: 'Guides', items: guides.map((guide) => item(`guides/${guide}`)) },
    { text: 'Reference material', items: referenceMaterial.map(item) },
    {
      text: 'Decisions',
      collapsed: true,
      // Newest first: the recent ones are the ones people look for.
      items: markdownPages(join(docsDirectory, 'decisions'))
        .reverse()
        .map((decision) => item(`decisions/${decision}`)),
    },
  ];
}
