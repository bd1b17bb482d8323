import type { TObject, TString } from 'typebox';
import type { Agent, AgentTool } from './agent.js';
import { ConfigurationError, GhostError, ToolError } from './errors.js';
import { runNestedAgent } from './nested-agent.js';
import { defineTool } from './tool.js';

/** The options of {@link Agent.asTool}. */
export interface AgentToolOptions {
  /**
   * The name the model calls (1 to 64 letters, digits, `_` or `-`). Default: the agent's name,
   * each other character made `_` and cut at 64 (`'Research Agent'` becomes `Research_Agent`).
   */
  readonly name?: string;
  /**
   * What the model reads about the tool: say what the agent is good at, so the model knows when
   * to ask it. Default: `Asks the agent '<name>' and returns its answer.`, followed by how to
   * write its input; give your own, the default says nothing of what the agent knows.
   */
  readonly description?: string;
  /**
   * How long one call may run before it is stopped and the model told it timed out, in
   * milliseconds. Default 600,000 (10 minutes); the run's deadline applies too.
   */
  readonly timeoutMs?: number;
}

/** The default of {@link AgentToolOptions.timeoutMs}: an agent takes model turns, so far longer than a tool's default. */
const defaultAgentToolTimeoutMs = 600_000;

const optionNames: ReadonlySet<string> = new Set(['name', 'description', 'timeoutMs']);

/**
 * `Type.Object({ input: Type.String({ description }) })`, written as the plain JSON Schema it is:
 * importing `@ghost/core` loads no typebox module (schemas compile at the first validation).
 */
const inputSchema = Object.freeze({
  type: 'object',
  required: ['input'],
  properties: {
    input: {
      type: 'string',
      description:
        'The task or question for the agent, with everything it needs to know: it does not see this conversation.',
    },
  },
}) as unknown as TObject<{ input: TString }>;

/** The agent's name as a tool name: characters a tool name cannot hold become `_`. */
function toolNameOf(agentName: string): string {
  return agentName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * The agent as a tool (see {@link Agent.asTool}): a call runs the agent nested in the caller's
 * run and returns its answer's text. When the agent does not answer (it fails, reaches a
 * limit, or may not nest that deep), the call fails with a `ToolError` (`AGENT_TOOL_FAILED`)
 * whose message the model reads: `Agent '<name>' did not answer: <why>`, the why being the
 * error's own message for a Ghost error and its class name otherwise. Cancellation, the
 * deadline and the call's timeout are not results: the tool-call pipeline reports them.
 */
export function agentTool(agent: Agent, options: AgentToolOptions = {}): AgentTool {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError(`asTool() of agent '${agent.name}' takes an options object or nothing.`, {
      code: 'AGENT_OPTION_INVALID',
    });
  }
  for (const key of Object.keys(options)) {
    if (!optionNames.has(key)) {
      throw new ConfigurationError(
        `asTool() of agent '${agent.name}' has no option '${key}'. Known options: ${[...optionNames].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key },
      );
    }
  }
  const description =
    options.description ??
    `Asks the agent '${agent.name}' and returns its answer. Send the whole task as input: the agent does not see this conversation.`;
  return defineTool({
    name: options.name ?? toolNameOf(agent.name),
    description,
    input: inputSchema,
    timeoutMs: options.timeoutMs ?? defaultAgentToolTimeoutMs,
    async execute({ input }, context) {
      try {
        const nested = await runNestedAgent(context.run, {
          agent,
          input,
          placement: `tool:${context.toolCallId}`,
          signal: context.signal,
        });
        return nested.result.text;
      } catch (error) {
        // Stopped from outside (the run, the deadline, this call's timeout): not the agent's answer.
        if (context.signal.aborted) throw error;
        throw didNotAnswer(agent.name, error);
      }
    },
  });
}

function didNotAnswer(agentName: string, error: unknown): ToolError {
  const why = GhostError.isInstance(error)
    ? (error as Error).message
    : error instanceof Error
      ? error.name
      : typeof error;
  return new ToolError(`Agent '${agentName}' did not answer: ${why}`, {
    code: 'AGENT_TOOL_FAILED',
    cause: error,
  });
}
