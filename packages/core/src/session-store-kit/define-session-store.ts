import { completePlugin, type PluginDeclaration } from '../plugin-declaration.js';
import type { SessionStoreV1 } from '../session-store.js';

/**
 * Declares a session store: fills in `kind: 'session-store'` and
 * `specificationVersion: 'session-store-v1'` when left out, checks its shape, and returns it frozen
 * and typed (as every `define*` helper of a plugin does). Throws a `PluginInvalidError` or
 * `PluginVersionError` naming what is wrong (a missing method, limits that are not whole numbers).
 *
 * @example
 * ```ts
 * export function redisSessionStore(options: RedisStoreOptions): SessionStoreV1 {
 *   return defineSessionStore({
 *     kind: 'session-store',
 *     specificationVersion: 'session-store-v1',
 *     name: 'redis',
 *     limits: { ...defaultSessionLimits, ...options.limits },
 *     open, list, delete: remove, prune, close,
 *   });
 * }
 * ```
 */
export function defineSessionStore<Declared extends PluginDeclaration<SessionStoreV1>>(
  store: Declared,
): Declared & SessionStoreV1 {
  return completePlugin(store, { kind: 'session-store', specificationVersion: 'session-store-v1' });
}
