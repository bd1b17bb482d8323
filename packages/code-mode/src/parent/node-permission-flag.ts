/**
 * The flag that turns on Node's permission model for a host running on Node `version`
 * (`process.versions.node` form, e.g. `'24.22.3'`). Node 20 and 22 before 22.13 know only
 * `--experimental-permission`; 22.13 and 23.5 made it `--permission`, and Node 24 refuses the old
 * name ("bad option"), so a host started with it would never start.
 */
export function nodePermissionFlag(version: string = process.versions.node): string {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const hasStableFlag = major > 23 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  return hasStableFlag ? '--permission' : '--experimental-permission';
}
