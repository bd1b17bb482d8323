import { readdir, readFile } from 'node:fs/promises';

/**
 * The live child processes of this process and of their descendants, with their command lines,
 * read from `/proc` (Linux only; elsewhere it returns `[]`). Tests use it to prove that closing a
 * session left no engine host running.
 */
export async function descendantProcesses(): Promise<{ pid: number; command: string }[]> {
  if (process.platform !== 'linux') return [];
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue; // a zombie has already exited
      parents.set(pid, Number(fields[1]));
      commands.set(pid, (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ').trim());
    } catch {
      // The process ended while we looked.
    }
  }
  const found: { pid: number; command: string }[] = [];
  const ancestors = new Set([process.pid]);
  let isGrowing = true;
  while (isGrowing) {
    isGrowing = false;
    for (const [pid, parent] of parents) {
      if (ancestors.has(parent) && !ancestors.has(pid)) {
        ancestors.add(pid);
        found.push({ pid, command: commands.get(pid) ?? '' });
        isGrowing = true;
      }
    }
  }
  return found;
}
