/**
 * The host argument that names the isolated-vm native addon to load
 * (`--ghost-isolated-vm-addon=<file>`): the one the engine's preflight found and loaded for the
 * Node.js running it.
 */
export const isolatedVmArgument = '--ghost-isolated-vm-addon=';
