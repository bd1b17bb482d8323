import type { TSchema } from 'typebox';
import { ConfigurationError } from './errors.js';
import { compileValidator, toJsonSchema } from './json-schema-validator.js';
import type { ModelOutputFormat } from './model.js';

/** A run's `output` schema, ready to send to the model and to check its answer. */
export interface StructuredOutput {
  readonly format: ModelOutputFormat;
  /** The answer's value, or why it does not match. */
  parse(
    text: string,
  ):
    | { readonly ok: true; readonly value: unknown }
    | { readonly ok: false; readonly problems: readonly string[] };
}

/**
 * Prepares an `output` schema. It is compiled when the first answer is checked; a schema typebox
 * cannot compile makes that `parse` throw a `ConfigurationError`.
 */
export function prepareStructuredOutput(agentName: string, schema: TSchema): StructuredOutput {
  if (typeof schema !== 'object' || schema === null) {
    throw new ConfigurationError(
      `Agent '${agentName}' has an output that is not a schema; pass a typebox schema such as Type.Object({ answer: Type.String() }).`,
      { code: 'AGENT_OUTPUT_INVALID' },
    );
  }
  // Compiled at the first answer checked (see json-schema-validator.ts), not when the agent is defined.
  const validate = compileValidator(
    schema,
    (cause) =>
      new ConfigurationError(
        `Agent '${agentName}' has an output schema typebox cannot compile: ${String(cause)}`,
        { code: 'AGENT_OUTPUT_INVALID', cause },
      ),
  );
  return {
    format: { type: 'json', schema: toJsonSchema(schema), name: 'output' },
    parse(text) {
      let value: unknown;
      try {
        value = JSON.parse(withoutCodeFence(text));
      } catch (error) {
        return { ok: false, problems: [`the answer is not JSON (${(error as Error).message})`] };
      }
      const problems = validate(value);
      if (problems.length === 0) return { ok: true, value };
      return { ok: false, problems: problems.map((problem) => `${problem.path || '/'}: ${problem.message}`) };
    },
  };
}

/** Models asked for JSON without a native JSON mode often wrap it in one Markdown code fence. */
function withoutCodeFence(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  return fenced ? (fenced[1] as string) : trimmed;
}

/** What the model is told when its answer does not match, for its one repair turn. */
export function repairRequest(problems: readonly string[]): string {
  return `Your answer does not match the required JSON schema: ${problems.slice(0, 20).join('; ')}. Answer again with only the JSON value, matching the schema exactly.`;
}
