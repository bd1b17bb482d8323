import type { Plugin } from './plugin.js';
import { validatePlugin } from './validate-plugin.js';

/**
 * A plugin as its author declares it to a `define*` helper: `kind` and `specificationVersion` may
 * be left out (the helper fills them in); when given, they must be the helper's.
 */
export type PluginDeclaration<Declared extends Plugin> = Omit<Declared, 'kind' | 'specificationVersion'> &
  Partial<Pick<Declared, 'kind' | 'specificationVersion'>>;

/**
 * What every `define*` helper of a plugin does, the same way: fills in `kind` and
 * `specificationVersion` where they are left out, checks the whole plugin (`PluginInvalidError`,
 * `PluginVersionError`), and returns it frozen, a new object, so the declaration is left as it was.
 */
export function completePlugin<Complete extends Plugin>(
  declared: object,
  identity: Pick<Complete, 'kind' | 'specificationVersion'>,
): Complete {
  const complete = Object.freeze({ ...identity, ...withoutUndefinedIdentity(declared) });
  validatePlugin(complete, { kind: identity.kind });
  return complete as unknown as Complete;
}

function withoutUndefinedIdentity(declared: object): object {
  const { kind, specificationVersion, ...rest } = declared as Record<string, unknown>;
  return {
    ...(kind === undefined ? {} : { kind }),
    ...(specificationVersion === undefined ? {} : { specificationVersion }),
    ...rest,
  };
}
