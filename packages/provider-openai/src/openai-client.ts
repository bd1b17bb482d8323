import { ConfigurationError } from '@ghost/core';
import { ModelAuthenticationError } from '@ghost/core/provider';
import OpenAI from 'openai';
import { limitedFetch } from './limited-fetch.js';

/** How to reach the server, shared by `createOpenAI` and `createOpenAICompatible`. */
export interface ClientSettings {
  readonly apiKey?: string | undefined;
  readonly baseURL?: string | undefined;
  readonly organization?: string | undefined;
  readonly project?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly client?: OpenAI | undefined;
  readonly timeoutMs?: number | undefined;
}

/** Where the credentials come from, which differs between OpenAI and other servers. */
export interface ClientFlavour {
  /** The provider's name, for messages. */
  readonly provider: string;
  /** The function users call, for messages: `createOpenAI` or `createOpenAICompatible`. */
  readonly factoryName: string;
  /**
   * OpenAI itself: the key and base URL fall back to `OPENAI_API_KEY` and `OPENAI_BASE_URL`, and a
   * missing key fails before any request. Other servers get no key unless given one, and never
   * any `OPENAI_*` variable, so an OpenAI key is not sent to a third party.
   */
  readonly isOpenAI: boolean;
}

const clientOnlyOptions = ['apiKey', 'baseURL', 'organization', 'project', 'headers', 'fetch'] as const;

/** Checks options that cannot go together with a user's own `client`. */
export function checkClientSettings(settings: ClientSettings, flavour: ClientFlavour): void {
  if (settings.client === undefined) return;
  if (typeof (settings.client as { withOptions?: unknown }).withOptions !== 'function') {
    throw new ConfigurationError(
      `${flavour.factoryName}({ client }) takes a client made with new OpenAI(...) from the openai package (version 6 or 7).`,
      { code: 'PROVIDER_OPTION_INVALID', option: 'client' },
    );
  }
  const conflicting = clientOnlyOptions.filter((option) => settings[option] !== undefined);
  if (conflicting.length > 0) {
    throw new ConfigurationError(
      `${flavour.factoryName}() got a client and ${conflicting.join(', ')}: configure those on the client you pass (new OpenAI({ ... })), or leave the client out.`,
      { code: 'PROVIDER_OPTION_CONFLICT', option: 'client', conflicting },
    );
  }
}

function missingKey(flavour: ClientFlavour): ModelAuthenticationError {
  return new ModelAuthenticationError(
    `${flavour.provider} needs an API key and none was found: set the OPENAI_API_KEY environment variable, or pass the apiKey option to ${flavour.factoryName}({ apiKey }).`,
    { provider: flavour.provider, code: 'MODEL_API_KEY_MISSING' },
  );
}

function environment(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The fetch a client of the user's was made with. The SDK keeps it (or the global one) in a field
 * its types call private; `undefined` if a version of the SDK stops doing so, and then the
 * client's responses are read as the SDK reads them.
 */
function fetchOf(client: OpenAI): typeof globalThis.fetch | undefined {
  const fetch: unknown = Reflect.get(client, 'fetch');
  return typeof fetch === 'function' ? (fetch as typeof globalThis.fetch) : undefined;
}

function createClient(settings: ClientSettings, flavour: ClientFlavour): OpenAI {
  const timeout = settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs };
  // Ghost retries with retryModelRequest (one policy, every retry a visible part), so the SDK
  // must not retry on its own. Every response is read through limitedFetch, which bounds it
  // before the SDK buffers anything.
  if (settings.client !== undefined) {
    const userFetch = fetchOf(settings.client);
    return settings.client.withOptions({
      maxRetries: 0,
      ...timeout,
      ...(userFetch !== undefined ? { fetch: limitedFetch(userFetch, flavour.provider) } : {}),
    });
  }
  const shared = {
    maxRetries: 0,
    ...timeout,
    fetch: limitedFetch(settings.fetch ?? globalThis.fetch, flavour.provider),
  };
  if (flavour.isOpenAI) {
    const apiKey = settings.apiKey ?? environment('OPENAI_API_KEY');
    if (apiKey === undefined) throw missingKey(flavour);
    const baseURL = settings.baseURL ?? environment('OPENAI_BASE_URL');
    return new OpenAI({
      ...shared,
      apiKey,
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(settings.organization !== undefined ? { organization: settings.organization } : {}),
      ...(settings.project !== undefined ? { project: settings.project } : {}),
      ...(settings.headers !== undefined ? { defaultHeaders: { ...settings.headers } } : {}),
    });
  }
  return new OpenAI({
    ...shared,
    baseURL: settings.baseURL ?? null,
    // The SDK needs some key; without one the Authorization header is removed again below.
    apiKey: settings.apiKey ?? 'none',
    organization: settings.organization ?? null,
    project: settings.project ?? null,
    defaultHeaders: {
      ...(settings.apiKey === undefined ? { Authorization: null } : {}),
      ...settings.headers,
    },
  });
}

/**
 * A client made on first use: importing a provider never throws and never reads the
 * environment; the first request does, and a missing OpenAI key fails there, before anything is
 * sent. A failed attempt is not remembered, so setting the key later works.
 */
export function lazyClient(settings: ClientSettings, flavour: ClientFlavour): () => OpenAI {
  let client: OpenAI | undefined;
  return () => {
    client ??= createClient(settings, flavour);
    return client;
  };
}
