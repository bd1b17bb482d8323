import { execFile } from 'node:child_process';

/**
 * The descriptors above stderr that a program this process starts with a plain
 * `child_process.spawn` receives: ones this process inherited without close-on-exec from
 * whatever started it (Node opens its own with close-on-exec). It starts the native probe, outside
 * any sandbox, and takes the descriptors it finds open with `fcntl`: no /proc needed, so it works
 * alike on Linux and macOS, and what it measures is exactly what a child receives.
 */
export function inheritableDescriptors(nativeProbePath: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    execFile(nativeProbePath, ['fds'], { timeout: 10_000 }, (error, stdout) => {
      if (error !== null) {
        reject(
          new Error(`The native probe could not list its descriptors: ${error.message}`, { cause: error }),
        );
        return;
      }
      try {
        const { fds } = JSON.parse(stdout) as { fds: number[] };
        resolve(fds.filter((fd) => fd > 2));
      } catch (parseError) {
        reject(
          new Error(`The native probe printed no descriptor list: ${stdout.slice(0, 200)}`, {
            cause: parseError,
          }),
        );
      }
    });
  });
}
