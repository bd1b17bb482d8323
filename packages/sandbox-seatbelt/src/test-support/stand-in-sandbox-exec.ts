import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The exit status of the stand-in when its arguments are not what `sandbox-exec` takes. */
const standInRefusalStatus = 97;

/** A stand-in for `/usr/bin/sandbox-exec`, for testing the backend's process management on Linux. */
export interface StandInSandboxExec {
  /** The script's absolute path, for the backend's `sandboxExecPath`. */
  readonly path: string;
  /** The argument lists it was called with so far, one per call, in no particular order. */
  calls(): Promise<string[][]>;
}

/**
 * Writes a shell script into `directory` that stands in for `sandbox-exec`: it records its
 * arguments (NUL-separated, one file per call) so the test can read the profile back with its
 * S-expression reader, checks their shape (a profile holding `(version 1)` then `(deny default)`) as `sandbox-exec -p <profile> [-DNAME=value…] --
 * <absolute command> [args…]` (exiting {@link standInRefusalStatus} with a message otherwise),
 * and then `exec`s the command, as `sandbox-exec` does after applying the profile. It applies no
 * profile: nothing run through it is confined, so a test using it proves process management,
 * never enforcement. `directory` must hold no single quote.
 */
export async function writeStandInSandboxExec(directory: string): Promise<StandInSandboxExec> {
  if (directory.includes("'")) throw new Error('The stand-in directory must not contain a single quote.');
  const callsDirectory = join(directory, 'calls');
  await mkdir(callsDirectory, { recursive: true });
  const path = join(directory, 'sandbox-exec');
  await writeFile(
    path,
    `#!/bin/sh
# Stand-in for /usr/bin/sandbox-exec (tests only): records and checks its arguments, then runs the
# command unconfined.
printf '%s\\0' "$@" > '${callsDirectory}'/$$
refuse() { echo "stand-in sandbox-exec: $1" >&2; exit ${standInRefusalStatus}; }
[ "$1" = -p ] || refuse "expected -p first, got '$1'"
shift
case "$1" in *'(version 1)'*'(deny default)'*) ;; *) refuse 'the profile lacks (version 1) then (deny default)' ;; esac
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -D?*=*) shift ;;
    *) refuse "expected -DNAME=value or --, got '$1'" ;;
  esac
done
case "$1" in /*) ;; *) refuse "the command must be an absolute path, got '$1'" ;; esac
exec "$@"
`,
  );
  await chmod(path, 0o755);
  return {
    path,
    async calls() {
      const files = await readdir(callsDirectory);
      return Promise.all(
        files.map(async (file) => {
          const text = await readFile(join(callsDirectory, file), 'utf8');
          return text.split('\0').slice(0, -1);
        }),
      );
    },
  };
}
