import type { SandboxDetection } from '@ghost/core/sandbox';

const marks = { enforced: 'ok  ', fallback: 'weak', missing: 'no  ' } as const;

/**
 * Renders a backend's detection for people: whether it can contain programs here, then one line
 * per mechanism it checked, saying how it is enforced or why it is not.
 *
 * @example
 * ```ts
 * console.log(formatDoctorReport('bwrap', await bwrapSandbox.detect()));
 * // sandbox bwrap: available
 * //   ok   bubblewrap       /usr/bin/bwrap (bubblewrap 0.8.0)
 * //   ...
 * ```
 */
export function formatDoctorReport(name: string, detection: SandboxDetection): string {
  const lines = [
    detection.available
      ? `sandbox ${name}: available, code mode runs programs in it`
      : `sandbox ${name}: NOT available, code mode refuses sandbox: 'native' here`,
  ];
  if (!detection.available) lines.push(`  why: ${detection.reason ?? 'no reason given'}`);
  const checks = detection.checks ?? [];
  const width = Math.max(0, ...checks.map((check) => check.name.length));
  for (const check of checks)
    lines.push(`  ${marks[check.status]} ${check.name.padEnd(width)}  ${check.detail}`);
  const enforced = Object.entries(detection.capabilities)
    .filter(([, on]) => on)
    .map(([capability]) => capability);
  lines.push(`  capabilities: ${enforced.length > 0 ? enforced.join(', ') : 'none'}`);
  return lines.join('\n');
}
