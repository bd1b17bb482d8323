import type { Static, TObject, TSchema } from 'typebox';
import { ConfigurationError } from './errors.js';
import { compileValidator, type SchemaProblem, toJsonSchema } from './json-schema-validator.js';
import type { Artifact, JsonSchema } from './model.js';
import type { RunContext } from './run-context.js';

export type { SchemaProblem } from './json-schema-validator.js';

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** What a tool sees about the call it is serving. */
export interface ToolContext {
  /** Aborts on cancellation, on the run's deadline and when the tool's own timeout passes. */
  readonly signal: AbortSignal;
  /** The id the model gave this call. */
  readonly toolCallId: string;
  /** The run this call belongs to: its invocation, state and deadline. */
  readonly run: RunContext;
}

/** What `authorize` sees: who is asking, for what, in which run. */
export interface ToolAuthorizationContext {
  readonly toolName: string;
  /** The validated input. */
  readonly input: unknown;
  /** The trusted caller id given to `ask`, when there is one. */
  readonly actorId: string | undefined;
  /** The application context given to `ask`. */
  readonly context: Readonly<Record<string, unknown>>;
  readonly run: RunContext;
}

/** What a `needsApproval` predicate sees besides the input: which call, by whom, in which run. */
export interface ToolApprovalContext {
  /** The tool being called. */
  readonly toolName: string;
  /** The id the model (or the program) gave this call. */
  readonly toolCallId: string;
  /** The trusted caller id given to `ask`, when there is one. */
  readonly actorId: string | undefined;
  /** The application context given to `ask`. */
  readonly context: Readonly<Record<string, unknown>>;
  /** The run (or nested agent invocation) the call belongs to. */
  readonly run: RunContext;
}

/**
 * Whether a tool's calls wait for a person's decision: `true` for every call, or a predicate
 * asked per call with the validated input (a predicate that throws or rejects counts as `true`).
 */
export type ToolNeedsApproval =
  | boolean
  | ((input: unknown, context: ToolApprovalContext) => boolean | Promise<boolean>);

/** `authorize`'s answer: allow the call, or deny it with a reason the model reads. */
export type ToolAuthorization = { readonly allow: true } | { readonly allow: false; readonly reason: string };

/**
 * A tool's value together with artifacts (images, documents) that go back to the model beside
 * it. Return one from `execute` when a plain JSON value is not enough.
 *
 * @example
 * ```ts
 * return new ToolResult({ value: { pages: 3 }, artifacts: [{ name: 'chart.png', mediaType: 'image/png', data: png }] });
 * ```
 */
export class ToolResult<Value = unknown> {
  readonly value: Value;
  readonly artifacts: readonly Artifact[];

  constructor(init: { value: Value; artifacts?: readonly Artifact[] }) {
    this.value = init.value;
    this.artifacts = Object.freeze([...(init.artifacts ?? [])]);
  }
}

/** The options of {@link defineTool}. */
export interface ToolDefinition<Input extends TObject = TObject, Output = unknown> {
  /** 1–64 characters of `A–Z a–z 0–9 _ -`: the name the model calls. */
  readonly name: string;
  /** Tells the model what the tool does and when to use it. */
  readonly description: string;
  /** A typebox object schema; the model's arguments are validated against it before `execute`. */
  readonly input: Input;
  /** A typebox schema of the value `execute` returns; when given, results are checked against it. */
  readonly output?: TSchema;
  /** Does the work. Return a JSON value or a {@link ToolResult}; throw a `ToolError` to tell the model why not. */
  execute(
    input: Static<Input>,
    context: ToolContext,
  ): Output | ToolResult<Output> | Promise<Output | ToolResult<Output>>;
  /** How long one call may take before its signal aborts and the model is told it timed out. Default 60,000. */
  readonly timeoutMs?: number;
  /** When true, this tool never runs at the same time as another tool of the same run. */
  readonly exclusive?: boolean;
  /** Decides, per call, whether the caller may use this tool. Runs after validation, before `execute`. */
  authorize?(context: ToolAuthorizationContext): ToolAuthorization | Promise<ToolAuthorization>;
  /**
   * Makes calls wait for a person's decision before they run: `true` for every call, or a
   * predicate of the validated input (`(input, context) => boolean | Promise<boolean>`; one that
   * throws counts as "needs approval"). A waiting call emits `approval_requested` on the run's
   * stream; answer with `run.approve(approvalId)` or `run.reject(approvalId, { message })`. A
   * rejected or unanswered call (the agent's `approvalTimeoutMs`) never runs, and the model reads
   * why. Asked after validation and the tool-call budget, before `authorize`; the wait does not
   * count against `timeoutMs`. See `docs/guides/approvals.md`.
   *
   * @example
   * ```ts
   * defineTool({ name: 'refund', description: '...', input, execute,
   *   needsApproval: (input) => (input as { amount: number }).amount > 100 });
   * ```
   */
  readonly needsApproval?: ToolNeedsApproval;
}

/** A tool an agent can call, made by {@link defineTool}. */
export interface Tool<Input extends TObject = TObject, Output = unknown>
  extends ToolDefinition<Input, Output> {
  readonly kind: 'tool';
  readonly timeoutMs: number;
  readonly exclusive: boolean;
  /** The input schema as plain JSON Schema, as the model receives it. */
  readonly inputJsonSchema: JsonSchema;
  /** The output schema as plain JSON Schema, when the tool declares one. */
  readonly outputJsonSchema: JsonSchema | undefined;
  /**
   * Validates a value against the input schema; returns the problems, empty when valid. The schema
   * is compiled at the first call, which throws a `ConfigurationError` (`TOOL_SCHEMA_INVALID`) when
   * typebox cannot compile it.
   */
  validateInput(value: unknown): readonly SchemaProblem[];
  /** Validates a value against the output schema; empty when valid or when there is no output schema. */
  validateOutput(value: unknown): readonly SchemaProblem[];
}

/** The default of `timeoutMs`. */
export const defaultToolTimeoutMs = 60_000;

/**
 * Defines a tool. Configuration mistakes (a bad name, an input schema that is not an object)
 * throw a `ConfigurationError` here, not when the model first calls the tool.
 *
 * @example
 * ```ts
 * import Type from 'typebox';
 *
 * const lookup = defineTool({
 *   name: 'help_center_lookup',
 *   description: 'Finds the help-center entry for a topic.',
 *   input: Type.Object({ topic: Type.String() }),
 *   async execute({ topic }) {
 *     return { topic, text: await helpCenter.find(topic) };
 *   },
 * });
 * ```
 */
export function defineTool<Input extends TObject, Output>(
  definition: ToolDefinition<Input, Output>,
): Tool<Input, Output> {
  const { name, description, input, output } = definition;
  if (typeof name !== 'string' || !toolNamePattern.test(name)) {
    throw new ConfigurationError(
      `Tool name ${JSON.stringify(name)} is invalid: use 1 to 64 letters, digits, '_' or '-'.`,
      { code: 'TOOL_NAME_INVALID', tool: name },
    );
  }
  if (typeof description !== 'string') {
    throw new ConfigurationError(
      `Tool '${name}' needs a description string that tells the model what it does.`,
      {
        code: 'TOOL_DESCRIPTION_MISSING',
      },
    );
  }
  const inputSchema = input as unknown as Record<string, unknown> | undefined;
  if (typeof inputSchema !== 'object' || inputSchema === null || inputSchema.type !== 'object') {
    throw new ConfigurationError(
      `Tool '${name}' must take an object schema as input, such as Type.Object({ query: Type.String() }).`,
      { code: 'TOOL_INPUT_SCHEMA_INVALID', tool: name },
    );
  }
  if (typeof definition.execute !== 'function') {
    throw new ConfigurationError(`Tool '${name}' needs an execute(input, context) function.`, {
      code: 'TOOL_EXECUTE_MISSING',
    });
  }
  const timeoutMs = definition.timeoutMs ?? defaultToolTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigurationError(
      `Tool '${name}' has timeoutMs ${timeoutMs}: use a positive number of milliseconds.`,
      {
        code: 'TOOL_TIMEOUT_INVALID',
      },
    );
  }
  const { needsApproval } = definition;
  if (
    needsApproval !== undefined &&
    typeof needsApproval !== 'boolean' &&
    typeof needsApproval !== 'function'
  ) {
    throw new ConfigurationError(
      `Tool '${name}' has needsApproval of type ${needsApproval === null ? 'null' : typeof needsApproval}: use true, false or a function (input, context) => boolean.`,
      { code: 'TOOL_NEEDS_APPROVAL_INVALID', tool: name },
    );
  }
  // Compiled at the first validation (see json-schema-validator.ts): defining a tool loads no compiler.
  const schemaInvalid = (cause: unknown) =>
    new ConfigurationError(`Tool '${name}' has a schema typebox cannot compile: ${String(cause)}`, {
      code: 'TOOL_SCHEMA_INVALID',
      cause,
    });
  const validateInput = compileValidator(input, schemaInvalid);
  const validateOutput = compileValidator(output, schemaInvalid);
  return Object.freeze({
    ...definition,
    kind: 'tool' as const,
    timeoutMs,
    exclusive: definition.exclusive ?? false,
    inputJsonSchema: toJsonSchema(input),
    outputJsonSchema: output === undefined ? undefined : toJsonSchema(output),
    validateInput,
    validateOutput,
  });
}
