import type { ConformanceContext } from './conformance-context.js';

/**
 * Why a case that needs a guest's memory bounded cannot run, or `undefined` when it can: the
 * engine lists `'guest-memory-limit'`, or the sandbox enforces a memory limit on the host (not in
 * the thread placement, whose workers share this process and no sandbox).
 */
export async function unboundedMemoryReason(context: ConformanceContext): Promise<string | undefined> {
  if (context.capabilities.has('guest-memory-limit')) return undefined;
  if (context.placement === 'thread') {
    return "the engine does not list 'guest-memory-limit', and the thread placement has no sandbox to bound memory";
  }
  const sandbox = await context.sandboxCapabilities();
  if (sandbox?.memoryLimit === true) return undefined;
  return `the engine does not list 'guest-memory-limit', and sandbox '${context.sandboxName}' enforces no memory limit here`;
}
