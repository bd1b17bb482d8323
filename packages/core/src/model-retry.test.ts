import { describe, expect, it } from 'vitest';
import type { ModelStreamPart } from './model.js';
import { modelErrorFromHttp } from './model-error-mapping.js';
import {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  ModelRateLimitError,
  ModelUnavailableError,
} from './model-errors.js';
import { retryAfterMilliseconds, retryModelRequest } from './model-retry.js';

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

async function* answer(text: string): AsyncGenerator<ModelStreamPart> {
  yield { type: 'text-delta', text };
  yield { type: 'finish', reason: 'stop' };
}

describe('retryModelRequest', () => {
  it('retries a retryable failure before the first part, announcing each retry with its delay', async () => {
    const failures = [new ModelRateLimitError('429', { retryAfterMs: 5 }), new ModelUnavailableError('503')];
    let attempts = 0;
    const parts = await collect(
      retryModelRequest(
        async () => {
          attempts += 1;
          const failure = failures.shift();
          if (failure) throw failure;
          return answer('ok');
        },
        { signal: new AbortController().signal, initialDelayMs: 1 },
      ),
    );
    expect(attempts).toBe(3);
    expect(parts.map((part) => part.type)).toEqual(['retry', 'retry', 'text-delta', 'finish']);
    expect(parts[0]).toMatchObject({ attempt: 2, delayMs: 5 });
    expect(parts[1]).toMatchObject({ attempt: 3 });
    expect((parts[1] as { delayMs: number }).delayMs).toBeLessThanOrEqual(2);
  });

  it('retries an error the stream raises before its first part, never one after it', async () => {
    let attempts = 0;
    const before = retryModelRequest(
      async () => {
        attempts += 1;
        return (async function* () {
          if (attempts === 1) throw new ModelUnavailableError('overloaded');
          yield* answer('ok');
        })();
      },
      { signal: new AbortController().signal, initialDelayMs: 1 },
    );
    expect((await collect(before)).map((part) => part.type)).toEqual(['retry', 'text-delta', 'finish']);

    let laterAttempts = 0;
    const after = retryModelRequest(
      async () => {
        laterAttempts += 1;
        return (async function* (): AsyncGenerator<ModelStreamPart> {
          yield { type: 'text-delta', text: 'Hel' };
          throw new ModelUnavailableError('lost');
        })();
      },
      { signal: new AbortController().signal, initialDelayMs: 1 },
    );
    await expect(collect(after)).rejects.toThrow('lost');
    expect(laterAttempts).toBe(1);
  });

  it('gives up after maxRetries, at once on an error that is not retryable, and on a retry-after too long', async () => {
    let attempts = 0;
    const always = () => {
      attempts += 1;
      throw new ModelUnavailableError('down');
    };
    await expect(
      collect(
        retryModelRequest(always, { signal: new AbortController().signal, maxRetries: 1, initialDelayMs: 1 }),
      ),
    ).rejects.toThrow('down');
    expect(attempts).toBe(2);
    attempts = 0;
    const refused = () => {
      attempts += 1;
      throw new ModelAuthenticationError('401');
    };
    await expect(
      collect(retryModelRequest(refused, { signal: new AbortController().signal })),
    ).rejects.toThrow('401');
    expect(attempts).toBe(1);
    const patient = () => {
      throw new ModelRateLimitError('429', { retryAfterMs: 3_600_000 });
    };
    await expect(
      collect(retryModelRequest(patient, { signal: new AbortController().signal })),
    ).rejects.toThrow('429');
  });

  it('stops waiting at once when the signal aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const parts = retryModelRequest(
      () => {
        throw new ModelRateLimitError('429', { retryAfterMs: 50_000 });
      },
      { signal: controller.signal },
    );
    const iterator = parts[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'retry', delayMs: 50_000 });
    const waiting = iterator.next();
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe('retryModelRequest with an idle timeout', () => {
  const never = new Promise<never>(() => {});

  it('gives up an attempt that stalls before its first part and retries it, aborting its signal', async () => {
    const signals: AbortSignal[] = [];
    const parts = await collect(
      retryModelRequest(
        (signal) => {
          signals.push(signal);
          return (async function* () {
            // The first attempt ignores its signal and never answers.
            if (signals.length === 1) await never;
            yield* answer('ok');
          })();
        },
        { signal: new AbortController().signal, idleTimeoutMs: 20, initialDelayMs: 1, provider: 'loop' },
      ),
    );
    expect(parts.map((part) => part.type)).toEqual(['retry', 'text-delta', 'finish']);
    const retry = parts[0] as Extract<ModelStreamPart, { type: 'retry' }>;
    expect(ModelUnavailableError.isInstance(retry.error)).toBe(true);
    expect(retry.error).toMatchObject({
      code: 'MODEL_STREAM_IDLE',
      limit: 'streamIdleTimeoutMs',
      provider: 'loop',
      isRetryable: true,
    });
    expect(retry.error.message).toMatch(/^loop sent nothing for 20 ms \(the limit streamIdleTimeoutMs\)/);
    expect(signals[0]?.reason).toBe(retry.error);
    expect(signals[1]?.aborted).toBe(false);
  });

  it('ends a stream that stalls after its first part with the idle error, never retried', async () => {
    let attempts = 0;
    const stalled = retryModelRequest(
      () => {
        attempts += 1;
        return (async function* (): AsyncGenerator<ModelStreamPart> {
          yield { type: 'text-delta', text: 'Hel' };
          await never;
        })();
      },
      { signal: new AbortController().signal, idleTimeoutMs: 20, initialDelayMs: 1 },
    );
    const error = await collect(stalled).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_STREAM_IDLE' });
    expect((error as Error).message).toMatch(/^The model sent nothing/);
    expect(attempts).toBe(1);
  });

  it('does not count the time its caller spends on a part', async () => {
    const parts: ModelStreamPart[] = [];
    for await (const part of retryModelRequest(() => answer('ok'), {
      signal: new AbortController().signal,
      idleTimeoutMs: 20,
    })) {
      parts.push(part);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(parts.map((part) => part.type)).toEqual(['text-delta', 'finish']);
  });

  it('sets no timer for a timeout longer than a timer can wait', async () => {
    const slow = async function* (): AsyncGenerator<ModelStreamPart> {
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield* answer('ok');
    };
    const parts = await collect(
      retryModelRequest(slow, { signal: new AbortController().signal, idleTimeoutMs: 2 ** 31 }),
    );
    expect(parts.map((part) => part.type)).toEqual(['text-delta', 'finish']);
  });
});

describe('retryAfterMilliseconds', () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfterMilliseconds(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMilliseconds(headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2026-12-04T10:00:00Z');
    expect(retryAfterMilliseconds(headers({ 'retry-after': 'Fri, 04 Dec 2026 10:00:03 GMT' }), now)).toBe(
      3000,
    );
    expect(retryAfterMilliseconds(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMilliseconds(headers({}))).toBeUndefined();
  });
});

describe('modelErrorFromHttp', () => {
  it('maps statuses and messages to the error a user can act on', () => {
    const map = (status: number, message: string, extra: Record<string, string> = {}) =>
      modelErrorFromHttp({
        provider: 'openai',
        status,
        message,
        headers: new Headers(extra),
        credentialsHint: 'OPENAI_API_KEY',
      });
    const auth = map(401, 'Incorrect API key');
    expect(ModelAuthenticationError.isInstance(auth)).toBe(true);
    expect(auth.message).toMatch(/OPENAI_API_KEY/);
    const limited = map(429, 'Rate limit', { 'retry-after': '3', 'x-request-id': 'req_9' });
    expect(ModelRateLimitError.isInstance(limited) && limited.retryAfterMs).toBe(3000);
    expect(limited).toMatchObject({ statusCode: 429, provider: 'openai', requestId: 'req_9' });
    expect(
      ModelContextOverflowError.isInstance(map(400, "This model's maximum context length is 128000 tokens")),
    ).toBe(true);
    expect(
      ModelContentFilterError.isInstance(map(400, 'Your request was rejected by our content filter')),
    ).toBe(true);
    expect(ModelUnavailableError.isInstance(map(529, 'Overloaded'))).toBe(true);
    expect(map(500, 'boom').isRetryable).toBe(true);
    const rejected = map(400, 'Unknown parameter');
    expect(rejected.code).toBe('MODEL_REQUEST_REJECTED');
    expect(rejected.isRetryable).toBe(false);
  });
});
