import { isPlainAscii, type SbplExpression } from './render-sbpl.js';

/**
 * The longest path written into a profile as a string literal, in bytes once escaped. Longer
 * literals are reported to break a profile from about 1 KB on; the limit is not documented, so
 * this keeps well under it, and a longer path goes through a parameter, which has no such limit.
 */
export const largestInlinePathBytes = 512;

/**
 * Writes each path of the spec into the profile: as a string literal when it is plain printable
 * ASCII and short, as a parameter otherwise. The same path always gets the same parameter.
 */
export class ProfilePaths {
  readonly #parameterNames = new Map<string, string>();

  expression(path: string): SbplExpression {
    const escapedBytes = path.length + (path.match(/[\\"]/g)?.length ?? 0);
    if (isPlainAscii(path) && escapedBytes <= largestInlinePathBytes) return { string: path };
    let name = this.#parameterNames.get(path);
    if (name === undefined) {
      name = `PATH_${this.#parameterNames.size}`;
      this.#parameterNames.set(path, name);
    }
    return ['param', { string: name }];
  }

  parameters(): Record<string, string> {
    const parameters: Record<string, string> = {};
    for (const [path, name] of this.#parameterNames) parameters[name] = path;
    return parameters;
  }
}
