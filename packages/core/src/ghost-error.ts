import type { CoreErrorCode } from './core-error-code.js';

/**
 * The code of a Ghost error: one of `@ghost/core`'s codes, or a code another package defines.
 * Each error class narrows its `code` to its own union, so `switch (error.code)` narrows once the
 * class is known; the open end (`string & {}`) is what lets plugin packages add codes while
 * editors still suggest the core ones. See `docs/errors.md`.
 */
export type GhostErrorCode = CoreErrorCode | (string & {});

/** Options every {@link GhostError} accepts. */
export interface GhostErrorOptions<Code extends string = GhostErrorCode> {
  /** A stable, machine-readable code such as `SANDBOX_UNAVAILABLE`. */
  code: Code;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

/** What the constructors of Ghost's error classes take besides the message: every option may be left out. */
export type GhostErrorInit<Code extends string = GhostErrorCode> = Partial<GhostErrorOptions<Code>>;

/** The static property of a marked class: its marker symbol and its stable name. */
const classIdentity = Symbol.for('ghost.error.class');

interface ErrorClassIdentity {
  readonly marker: symbol;
  readonly name: string;
}

function identityOf(errorClass: object): ErrorClassIdentity | undefined {
  // Only the class's own identity counts: a subclass that was not marked must not answer for its parent.
  if (!Object.hasOwn(errorClass, classIdentity)) return undefined;
  return (errorClass as { [classIdentity]: ErrorClassIdentity })[classIdentity];
}

/**
 * Gives an error class a stable identity: a `Symbol.for('ghost.error.<name>')` marker on its
 * prototype, which `isInstance` looks for. The marker is shared by every copy of the package
 * (two installed versions, a bundled and an unbundled copy) and survives a minifier renaming the
 * class, because it does not depend on `constructor.name`. Call it once, from the class's static
 * block, with a name no other Ghost error class uses.
 *
 * @example
 * ```ts
 * export class InvoiceMissingError extends GhostError {
 *   static {
 *     markErrorClass(InvoiceMissingError, 'InvoiceMissingError');
 *   }
 *   declare readonly code: 'INVOICE_MISSING';
 *   constructor(message: string) {
 *     super(message, { code: 'INVOICE_MISSING' });
 *   }
 * }
 * ```
 */
export function markErrorClass(
  errorClass: abstract new (...args: never[]) => GhostError,
  name: string,
): void {
  const identity: ErrorClassIdentity = { marker: Symbol.for(`ghost.error.${name}`), name };
  Object.defineProperty(errorClass, classIdentity, { value: identity });
  Object.defineProperty(errorClass.prototype, identity.marker, { value: true });
}

/**
 * The base of every error Ghost throws. Each has a stable `code`, a message that says what to do
 * next, an optional `cause`, and typed fields for the facts of its failure (such as
 * `ModelRateLimitError.retryAfterMs`).
 *
 * Use the static `isInstance()` instead of `instanceof`: it also recognises errors thrown by
 * another installed copy of a Ghost package.
 *
 * @example
 * ```ts
 * try {
 *   await agent.ask('hello');
 * } catch (error) {
 *   if (ConfigurationError.isInstance(error)) console.error(error.code, error.message);
 * }
 * ```
 */
export class GhostError extends Error {
  static {
    markErrorClass(GhostError, 'GhostError');
  }

  /** A stable, machine-readable code such as `SANDBOX_UNAVAILABLE`. */
  readonly code: GhostErrorCode;

  constructor(message: string, options: GhostErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    // The marked name, not `new.target.name`, which a minifier may have shortened.
    this.name = identityOf(new.target)?.name ?? new.target.name;
  }

  /**
   * True when `value` is an instance of this class (or of one of its subclasses), from any
   * installed copy of Ghost. A subclass that was not given {@link markErrorClass} falls back to
   * `instanceof`.
   */
  static isInstance<T extends abstract new (...args: never[]) => GhostError>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    if (typeof value !== 'object' || value === null) return false;
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance was called on
    const identity = identityOf(this);
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance was called on
    if (identity === undefined) return value instanceof this;
    // Only the marker counts: a look-alike class with the same name but no marker is not this class.
    return (value as { [marker: symbol]: unknown })[identity.marker] === true;
  }
}
