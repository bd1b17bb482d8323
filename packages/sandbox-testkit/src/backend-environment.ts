/**
 * The environment a probe saw, without `PWD` when it names the working directory: the one
 * variable a backend with environmentIsolation may add (bubblewrap always sets it). A `PWD` with
 * any other value is kept, so the comparison fails on it.
 */
export function withoutWorkingDirectory(env: Record<string, string>, cwd: string): Record<string, string> {
  const { PWD, ...rest } = env;
  return PWD === undefined || PWD === cwd ? rest : env;
}
