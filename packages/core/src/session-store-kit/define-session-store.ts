import type { SessionStoreV1 } from '../session-store.js';
import { validatePlugin } from '../validate-plugin.js';

/**
 * Checks a session store object and returns it frozen, typed: a store author's identity helper,
 * as `defineSandboxBackend` is a backend author's. Throws a `PluginInvalidError` or
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
export function defineSessionStore<Store extends SessionStoreV1>(store: Store): Store {
  validatePlugin(store, { kind: 'session-store' });
  return Object.freeze(store);
}
