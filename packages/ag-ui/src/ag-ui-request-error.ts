import { GhostError, type GhostErrorOptions } from '@ghost/core';

/**
 * An AG-UI request the handler refuses: the wrong method or media type, a body over the cap, or a
 * `RunAgentInput` that does not validate or cannot become a conversation. `status` (default 400) is
 * the HTTP status the handler answers with; the body is `{ error: { code, message, details? } }`.
 *
 * Throw one from `agUiHandler`'s `askOptions` hook to refuse a request yourself (say, 401 or 403
 * when the caller is not signed in).
 *
 * @example
 * ```ts
 * throw new AgUiRequestError('This account may not use the support agent.', { status: 403, code: 'FORBIDDEN' });
 * ```
 */
export class AgUiRequestError extends GhostError {
  /** The HTTP status of the answer, such as 400 or 413. */
  readonly status: number;

  constructor(message: string, options: Partial<GhostErrorOptions> & { readonly status?: number } = {}) {
    const { status = 400, ...rest } = options;
    super(message, { code: 'AG_UI_REQUEST_INVALID', ...rest });
    this.status = status;
  }
}
