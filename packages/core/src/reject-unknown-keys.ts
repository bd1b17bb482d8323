import { ConfigurationError } from './errors.js';

/** Throws `OPTION_UNKNOWN` for the first key of `value` not in `known`, naming `where` and the known keys. */
export function rejectUnknownKeys(value: object, known: Set<string>, where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key)) {
      throw new ConfigurationError(
        `${where} has no option '${key}'. Known options: ${[...known].join(', ')}.`,
        {
          code: 'OPTION_UNKNOWN',
          option: key,
        },
      );
    }
  }
}
