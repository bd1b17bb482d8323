import type { ProviderOptions } from '@ghost/core/provider';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeInto(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...target };
  for (const [key, value] of Object.entries(source)) {
    const existing = merged[key];
    // Objects merge key by key, so `{ text: { verbosity: 'low' } }` keeps a structured-output
    // format already in `text`; anything else (arrays included) replaces what was there.
    merged[key] = isPlainObject(existing) && isPlainObject(value) ? mergeInto(existing, value) : value;
  }
  return merged;
}

/**
 * The request body with the options a user gave for this provider (`providerOptions[key]`)
 * merged in: nested objects key by key, everything else replacing Ghost's value.
 */
export function mergeProviderOptions<Body extends object>(
  body: Body,
  providerOptions: ProviderOptions | undefined,
  key: string,
): Body {
  const options = providerOptions?.[key];
  if (options === undefined) return body;
  return mergeInto(body as Record<string, unknown>, options) as Body;
}
