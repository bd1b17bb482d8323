/**
 * The host argument that names the isolated-vm directory to load (`--ghost-isolated-vm=<path>`):
 * the one the engine's preflight found and checked for the Node.js running it.
 */
export const isolatedVmArgument = '--ghost-isolated-vm=';
