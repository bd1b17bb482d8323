// Canonical paths as lists: which lie inside which, and the directories above them.

/** Whether `path` is `root` or lies below it. */
export function isInside(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** The paths, without those inside another one of them: a `subpath` of the outer covers them. */
export function withoutNested(paths: readonly string[]): string[] {
  return paths.filter((path) => !paths.some((other) => other !== path && isInside(path, other)));
}

/** Every directory above `path`, from `/` down, without `path` itself. */
export function ancestorsOf(path: string): string[] {
  const components = path.split('/').filter(Boolean);
  const ancestors = ['/'];
  for (let length = 1; length < components.length; length += 1) {
    ancestors.push(`/${components.slice(0, length).join('/')}`);
  }
  return path === '/' ? [] : ancestors;
}

/** The paths once each, sorted. */
export function uniqueSorted(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort();
}
