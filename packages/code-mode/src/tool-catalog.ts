import type { JsonSchema, Tool } from '@ghost/core';
import { CodeModeConfigurationError } from './errors.js';
import { schemaComment, schemaToTypeScript } from './json-schema-typescript.js';

/** One tool as a program sees it. */
export interface CatalogTool {
  /** The tool's own name, as the agent knows it. */
  readonly name: string;
  /** The property a program calls: `tools.<identifier>`. */
  readonly identifier: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema | undefined;
  /** The TypeScript member declaring it, with its description as a doc comment. */
  readonly declaration: string;
}

/**
 * Names a tool cannot take in a program: the `tools` object's own methods, the guest globals,
 * `then` (it would make `tools` look like a Promise) and `Object.prototype`'s names.
 */
export const reservedIdentifiers: ReadonlySet<string> = new Set([
  'call',
  'parallel',
  'exec',
  'wait',
  'stop',
  'text',
  'finish',
  'exit',
  'ALL_TOOLS',
  'tools',
  'console',
  'then',
  'constructor',
  'prototype',
  '__proto__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'toJSON',
]);

/**
 * The JavaScript identifier for a tool name: characters outside `A–Z a–z 0–9 _ $` become `_`, a
 * leading digit gets a `_` before it, and `then` becomes `_then`.
 */
export function toIdentifier(name: string): string {
  let identifier = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (/^[0-9]/.test(identifier)) identifier = `_${identifier}`;
  if (identifier === 'then') identifier = '_then';
  return identifier;
}

function declare(tool: Tool, identifier: string): string {
  const comment = schemaComment({ description: tool.description }, '  ');
  const input = schemaToTypeScript(tool.inputJsonSchema, '  ');
  const output = tool.outputJsonSchema ? schemaToTypeScript(tool.outputJsonSchema, '  ') : 'unknown';
  return `${comment}  ${identifier}(args: ${input}): Promise<${output}>;`;
}

const guestDeclarations = `/** Every tool, with its schemas: { name, toolName, description, inputSchema, outputSchema? }. */
declare const ALL_TOOLS: ReadonlyArray<{ name: string; toolName: string; description: string; inputSchema: object; outputSchema?: object }>;
/** Adds a value to the output you read back (strings as they are, anything else as JSON). */
declare function text(value: unknown): void;
/** Ends the program at once; \`value\` becomes its completed value. \`finish\` is the same. */
declare function exit(value?: unknown): never;
declare function finish(value?: unknown): never;
/** Captured as output; log, info, warn, error and debug all write to it. */
declare const console: { log(...values: unknown[]): void; info(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void; debug(...values: unknown[]): void };`;

/**
 * The tools a program can call, with the TypeScript declarations the model is shown. Built from
 * the same JSON Schemas the broker validates with, so what the model is told and what is enforced
 * never differ.
 */
export class ToolCatalog {
  readonly tools: readonly CatalogTool[];
  /** The declarations of `tools`, `ALL_TOOLS`, `text`, `exit`, `finish` and `console`. */
  readonly declarations: string;
  readonly #byName: ReadonlyMap<string, CatalogTool>;

  private constructor(tools: readonly CatalogTool[]) {
    this.tools = Object.freeze(tools);
    const byName = new Map<string, CatalogTool>();
    for (const tool of tools) {
      byName.set(tool.name, tool);
      byName.set(tool.identifier, tool);
      byName.set(`tools.${tool.identifier}`, tool);
    }
    this.#byName = byName;
    const members = [
      ...tools.map((tool) => tool.declaration),
      '  /** Calls a tool by its name (or `tools.<name>`). */',
      '  call(name: string, args?: object): Promise<unknown>;',
      '  /** Runs the calls at the same time; results keep their order. */',
      '  parallel<T>(...calls: Array<() => Promise<T>>): Promise<T[]>;',
    ];
    this.declarations = `declare const tools: {\n${members.join('\n')}\n};\n${guestDeclarations}`;
    Object.freeze(this);
  }

  /**
   * Builds the catalog of `tools`. Throws a `CodeModeConfigurationError` when a name normalises to
   * a reserved identifier or two names to the same one; `where` starts the message.
   */
  static fromTools(tools: readonly Tool[], where: string): ToolCatalog {
    const byIdentifier = new Map<string, Tool>();
    const entries: CatalogTool[] = [];
    for (const tool of tools) {
      const identifier = toIdentifier(tool.name);
      if (reservedIdentifiers.has(identifier)) {
        throw new CodeModeConfigurationError(
          `${where}: tool '${tool.name}' would be tools.${identifier}, a name code mode reserves. Rename the tool, or keep it model-facing with except.`,
          { code: 'CODE_MODE_TOOL_NAME_RESERVED', details: { tool: tool.name, identifier } },
        );
      }
      const clash = byIdentifier.get(identifier);
      if (clash) {
        throw new CodeModeConfigurationError(
          `${where}: tools '${clash.name}' and '${tool.name}' would both be tools.${identifier}. Rename one, or keep one model-facing with except.`,
          { code: 'CODE_MODE_TOOL_NAME_COLLISION', details: { tools: [clash.name, tool.name], identifier } },
        );
      }
      byIdentifier.set(identifier, tool);
      entries.push(
        Object.freeze({
          name: tool.name,
          identifier,
          description: tool.description,
          inputSchema: tool.inputJsonSchema,
          outputSchema: tool.outputJsonSchema,
          declaration: declare(tool, identifier),
        }),
      );
    }
    return new ToolCatalog(entries);
  }

  /** The tool with this name, identifier or `tools.<identifier>`. */
  find(name: string): CatalogTool | undefined {
    return this.#byName.get(name);
  }

  /** What the guest's `ALL_TOOLS` is built from. */
  toJSON(): {
    name: string;
    identifier: string;
    description: string;
    inputSchema: JsonSchema;
    outputSchema?: JsonSchema;
  }[] {
    return this.tools.map((tool) => ({
      name: tool.name,
      identifier: tool.identifier,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    }));
  }
}
