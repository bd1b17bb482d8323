import { readdir, readFile } from 'node:fs/promises';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` prints it, in octal. */
const closeOnExecFlag = 0o2000000;

/**
 * This process's descriptors above stderr that lack close-on-exec, read from /proc/self/fdinfo:
 * ones it inherited from whatever started it (Node opens its own with close-on-exec). A plain
 * `child_process.spawn` passes them on to every program it starts.
 */
export async function inheritableDescriptors(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc/self/fdinfo')) {
    const fd = Number(entry);
    if (fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)$/m.exec(await readFile(`/proc/self/fdinfo/${entry}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & closeOnExecFlag) === 0) found.push(fd);
    } catch {
      // Closed while we looked.
    }
  }
  return found;
}
