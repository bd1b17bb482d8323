import { GhostError } from '@ghost/core';
import { type GhostErrorInit, markErrorClass } from '@ghost/core/plugin';

/** The codes `@ghost/ag-ui`'s refusals carry; `askOptions` may refuse with codes of its own, such as `FORBIDDEN`. */
export type AgUiErrorCode =
  | 'AG_UI_REQUEST_INVALID'
  | 'AG_UI_REQUEST_TOO_LARGE'
  | 'AG_UI_METHOD_NOT_ALLOWED'
  | 'AG_UI_NOT_ACCEPTABLE'
  | 'AG_UI_UNSUPPORTED_MEDIA_TYPE'
  | 'AG_UI_HANDLER_FAILED'
  | 'AG_UI_THREAD_ID_MISSING';

/** One way a request body fails to be a `RunAgentInput`. */
export interface AgUiRequestProblem {
  /** Where in the body, such as `messages.0.role`, or `(body)`. */
  readonly path: string;
  /** What is wrong there. */
  readonly message: string;
}

/** What {@link AgUiRequestError}'s constructor takes besides the message. */
export type AgUiRequestErrorInit = GhostErrorInit<AgUiErrorCode | (string & {})> & {
  /** The HTTP status to answer with. Default: 400. */
  readonly status?: number;
  /** The body size cap the request went over. */
  readonly maxBodyBytes?: number;
  /** What is wrong with the body, for a request that is not a `RunAgentInput`. */
  readonly problems?: readonly AgUiRequestProblem[];
};

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
  static {
    markErrorClass(AgUiRequestError, 'AgUiRequestError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: AgUiErrorCode | (string & {});
  /** The HTTP status of the answer, such as 400 or 413. */
  readonly status: number;
  /** The body size cap the request went over. */
  readonly maxBodyBytes: number | undefined;
  /** What is wrong with the body, for a request that is not a `RunAgentInput`. */
  readonly problems: readonly AgUiRequestProblem[] | undefined;

  constructor(message: string, init: AgUiRequestErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'AG_UI_REQUEST_INVALID' });
    this.status = init.status ?? 400;
    this.maxBodyBytes = init.maxBodyBytes;
    this.problems = init.problems;
  }
}
