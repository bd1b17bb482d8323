import type { ModelReasoning } from '@ghost/core/provider';

// What Ghost adds to AG-UI messages and tool calls so a thread can come back to it unchanged: a
// `ghost` key in `metadata` (open by key in AG-UI) and, for reasoning, the message's opaque
// `encryptedValue`, which AG-UI meant for exactly this (state a client keeps but never reads).

/** What Ghost keeps under `metadata.ghost` of a tool call, or of a tool message answering one. */
export interface GhostToolCallFields {
  /**
   * Set on a call a code-mode program made: the id of the `exec` or `wait` call it ran under.
   * When the thread comes back holding that call, the brokered call is dropped (the model never
   * made it; the exec call and its result are what it saw).
   */
  readonly parentToolCallId?: string;
  /** Set on code mode's own calls (`exec`, `wait`, `stop`): bookkeeping, which a UI may hide. */
  readonly control?: true;
  /** Set when the tool failed and `content` says why. */
  readonly isError?: true;
}

/** Reads `metadata.ghost` of a tool call or message, ignoring anything malformed. */
export function ghostFieldsOf(metadata: unknown): GhostToolCallFields {
  if (typeof metadata !== 'object' || metadata === null) return {};
  const ghost = (metadata as { ghost?: unknown }).ghost;
  if (typeof ghost !== 'object' || ghost === null) return {};
  const { parentToolCallId, control, isError } = ghost as Record<string, unknown>;
  return {
    ...(typeof parentToolCallId === 'string' ? { parentToolCallId } : {}),
    ...(control === true ? { control } : {}),
    ...(isError === true ? { isError } : {}),
  };
}

/** The `encryptedValue` of a reasoning message: what the provider needs back besides the text. */
export function reasoningValueOf(reasoning: ModelReasoning): string {
  const { text: _text, ...rest } = reasoning;
  return JSON.stringify(rest);
}

/**
 * The Ghost reasoning a reasoning message carries, or `undefined` when its `encryptedValue` is not
 * one Ghost wrote (reasoning without its provider is never sent to any model, so it is dropped).
 */
export function reasoningFromValue(
  text: string,
  encryptedValue: string | undefined,
): ModelReasoning | undefined {
  if (encryptedValue === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(encryptedValue);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { provider, signature, redactedData, id, providerMetadata } = parsed as Record<string, unknown>;
  if (typeof provider !== 'string') return undefined;
  return {
    text,
    provider,
    ...(typeof signature === 'string' ? { signature } : {}),
    ...(typeof redactedData === 'string' ? { redactedData } : {}),
    ...(typeof id === 'string' ? { id } : {}),
    ...(typeof providerMetadata === 'object' && providerMetadata !== null && !Array.isArray(providerMetadata)
      ? { providerMetadata: providerMetadata as ModelReasoning['providerMetadata'] & object }
      : {}),
  };
}
