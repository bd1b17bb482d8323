import { ConfigurationError } from '@ghost/core';

type Kind = 'string' | 'headers' | 'function' | 'client' | 'count' | 'milliseconds';

function invalid(factoryName: string, option: string, expected: string): ConfigurationError {
  return new ConfigurationError(`${factoryName}({ ${option} }) takes ${expected}.`, {
    code: 'PROVIDER_OPTION_INVALID',
    option,
  });
}

function isValid(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string' && value !== '';
    case 'headers':
      return (
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((each) => typeof each === 'string')
      );
    case 'function':
      return typeof value === 'function';
    case 'client':
      return typeof value === 'object' && value !== null;
    case 'count':
      return Number.isInteger(value) && (value as number) >= 0;
    case 'milliseconds':
      return typeof value === 'number' && Number.isFinite(value) && value > 0;
  }
}

const expectations: Record<Kind, string> = {
  string: 'a non-empty string',
  headers: 'an object of header names to string values',
  function: 'a function',
  client: 'an OpenAI client object',
  count: 'a whole number of at least 0',
  milliseconds: 'a positive number of milliseconds',
};

/**
 * Checks a provider factory's options: unknown names and wrong types are configuration errors
 * at definition time, not failed requests later.
 */
export function checkSettings(
  settings: unknown,
  schema: Readonly<Record<string, Kind>>,
  factoryName: string,
): void {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new ConfigurationError(`${factoryName}() takes an options object.`, {
      code: 'PROVIDER_OPTION_INVALID',
    });
  }
  for (const [option, value] of Object.entries(settings)) {
    const kind = schema[option];
    if (kind === undefined) {
      throw new ConfigurationError(
        `${factoryName}() has no option '${option}'. Known options: ${Object.keys(schema).join(', ')}.`,
        { code: 'PROVIDER_OPTION_UNKNOWN', option },
      );
    }
    if (value !== undefined && !isValid(kind, value)) throw invalid(factoryName, option, expectations[kind]);
  }
}

/** Checks a model id given to a provider. */
export function checkModelId(modelId: unknown, provider: string): asserts modelId is string {
  if (typeof modelId !== 'string' || modelId.trim() === '') {
    throw new ConfigurationError(
      `Provider '${provider}' needs a model id, such as 'gpt-5', got ${JSON.stringify(modelId)}.`,
      { code: 'MODEL_ID_INVALID', provider, ...(typeof modelId === 'string' ? { modelId } : {}) },
    );
  }
}
