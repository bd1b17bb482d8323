import type { BwrapIdentity } from './bwrap-identity.js';

/** Turns bubblewrap's start-up error into what to do about it. */
export function explainStartFailure(
  problem: string,
  appArmorRestricted: boolean,
  identity: BwrapIdentity,
): string {
  if (identity.kind === 'dropped' && /setpriv/.test(problem)) {
    return `setpriv could not switch programs to their ids, from ${identity.ids.first} (are ids ${identity.ids.first} to ${identity.ids.first + identity.ids.count - 1} mapped in this container's user namespace?): choose a range that is with createBwrapSandbox({ unprivilegedIds }), or run Ghost as a non-root user. It said: ${problem}`;
  }
  if (
    identity.kind === 'dropped' &&
    /No permissions to creat(?:e|ing) new namespace|Operation not permitted|Creating new namespace failed/i.test(
      problem,
    )
  ) {
    return `this process runs as root, and bubblewrap sets up a root parent's sandbox without a user namespace, which needs CAP_SYS_ADMIN; it is missing here (a container without it, or a seccomp or LSM policy): run Ghost as a non-root user (bubblewrap then uses a user namespace), or give the container CAP_SYS_ADMIN. bubblewrap said: ${problem}`;
  }
  if (appArmorRestricted) {
    return `bubblewrap cannot create a user namespace because AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1): install an AppArmor profile that allows userns for bwrap (see /etc/apparmor.d/bwrap-userns-restrict on Ubuntu), or run \`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\` as root. bubblewrap said: ${problem}`;
  }
  if (
    /setting up uid map|No permissions to creat(?:e|ing) new namespace|Operation not permitted/i.test(problem)
  ) {
    return `bubblewrap is not allowed to create namespaces here (inside an unprivileged container, or blocked by a seccomp or LSM policy): run outside the container, or give the container user namespaces (Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined). bubblewrap said: ${problem}`;
  }
  if (/seccomp/i.test(problem)) {
    return `bubblewrap could not load the seccomp filter: ${problem}`;
  }
  return `bubblewrap could not start a sandbox: ${problem}`;
}
