import type { Tool } from '@ghost/core';
import type { JsonSchema } from '@ghost/core/provider';
import { controlToolNames } from './control-tools.js';
import { CodeModeConfigurationError } from './errors.js';
import { guestDeclarations, guestGlobals, guestToolsMethods } from './guest-api.js';
import { documentationComment, schemaToTypeScript } from './json-schema-typescript.js';

/** One tool as a program sees it. */
export interface CatalogTool {
  /** The tool's own name, as the agent knows it. */
  readonly name: string;
  /** The property a program calls: `tools.<identifier>`. */
  readonly identifier: string;
  readonly description: string;
  /** The tool's input JSON Schema (a frozen copy). */
  readonly inputSchema: JsonSchema;
  /** The tool's output JSON Schema (a frozen copy), when it declares one. */
  readonly outputSchema: JsonSchema | undefined;
  /**
   * The TypeScript member declaring it inside `declare const tools: { ... }`, indented by two
   * spaces as it appears there, with the description as a doc comment above it.
   */
  readonly declaration: string;
}

/** One entry of {@link ToolCatalog.toJSON}: what the guest builds `tools` and `ALL_TOOLS` from. */
export interface CatalogToolJson {
  readonly name: string;
  readonly identifier: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
}

/**
 * Identifiers a tool cannot take in a program: the `tools` object's own methods (`call`,
 * `parallel`), the control tools and guest globals a program could confuse it with, `then` (it
 * would make `tools` look like a Promise to `await`) and the names every object inherits. The
 * guest API's part comes from its manifest (`guest-api.ts`).
 */
export const reservedIdentifiers: ReadonlySet<string> = new Set([
  ...guestToolsMethods.map((method) => method.name),
  ...controlToolNames,
  ...guestGlobals.filter((global) => global.isReserved).map((global) => global.name),
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
 *
 * @example
 * ```ts
 * toIdentifier('help-center-lookup'); // 'help_center_lookup'
 * toIdentifier('3d_render'); // '_3d_render'
 * ```
 */
export function toIdentifier(name: string): string {
  let identifier = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (/^[0-9]/.test(identifier)) identifier = `_${identifier}`;
  if (identifier === 'then') identifier = '_then';
  return identifier;
}

function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A frozen copy, so a program's catalog cannot change the schema the tool itself holds. */
function frozenSchema(schema: JsonSchema): JsonSchema {
  return deepFreeze(structuredClone(schema));
}

function hasRequiredProperties(schema: JsonSchema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}

function declare(tool: Tool, identifier: string): string {
  const comment = documentationComment([tool.description.trim()], '  ');
  const input = schemaToTypeScript(tool.inputJsonSchema, '  ');
  // The guest sends `{}` when a program calls `tools.x()`, so with nothing required the
  // argument may be left out.
  const parameter = hasRequiredProperties(tool.inputJsonSchema) ? 'args' : 'args?';
  const output = tool.outputJsonSchema ? schemaToTypeScript(tool.outputJsonSchema, '  ') : 'unknown';
  return `${comment}  ${identifier}(${parameter}: ${input}): Promise<${output}>;`;
}

/** How {@link ToolCatalog.fromTools} treats a name a program cannot use as it is. */
export interface ToolCatalogOptions {
  /**
   * Given, names a program cannot use no longer throw: a tool whose identifier is reserved gets a
   * `_` before it (`exit` becomes `tools._exit`, its name stays `exit`), and a tool whose
   * identifier is already taken (by an earlier tool, or by such a rename) is left out. Each is
   * reported here, in a sentence that says what happened and why. For tools the application does
   * not name itself, such as an MCP server's, which may change while a run goes on.
   */
  readonly onNameConflict?: (warning: string) => void;
}

/**
 * The tools a program can call, with the TypeScript declarations the model is shown. Built from
 * the same JSON Schemas the broker validates with, so what the model is told and what is
 * enforced never differ. Everything it returns is frozen.
 *
 * @example
 * ```ts
 * const catalog = ToolCatalog.fromTools([lookup, refund], "Agent 'support' code mode");
 * catalog.find('tools.help_center_lookup')?.name; // 'help-center-lookup'
 * const instructions = `Write JavaScript. You can use:\n${catalog.declarations}`;
 * ```
 */
export class ToolCatalog {
  /** The tools in the order they were given. */
  readonly tools: readonly CatalogTool[];
  /**
   * The declarations a program runs against: `declare const tools: { ... }` with one member per
   * tool plus `call` and `parallel`, then `ALL_TOOLS`, `text`, `exit`, `finish` and `console`
   * (the guest API's manifest, `guestGlobals`, gives all but the tools).
   */
  readonly declarations: string;
  readonly #byName: ReadonlyMap<string, CatalogTool>;
  readonly #json: readonly CatalogToolJson[];

  private constructor(tools: readonly CatalogTool[]) {
    this.tools = Object.freeze(tools);
    const byName = new Map<string, CatalogTool>();
    const members: string[] = [];
    const json: CatalogToolJson[] = [];
    for (const tool of tools) {
      // `fromTools` rules out collisions, so no key is set twice.
      byName.set(tool.name, tool);
      byName.set(tool.identifier, tool);
      byName.set(`tools.${tool.identifier}`, tool);
      members.push(tool.declaration);
      const entry: CatalogToolJson = {
        name: tool.name,
        identifier: tool.identifier,
        description: tool.description,
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
      };
      json.push(Object.freeze(entry));
    }
    this.#byName = byName;
    this.#json = Object.freeze(json);
    this.declarations = guestDeclarations(members);
    Object.freeze(this);
  }

  /**
   * Builds the catalog of `tools`, in their order. Throws a `CodeModeConfigurationError` when a
   * name normalises to a reserved identifier (`CODE_MODE_TOOL_NAME_RESERVED`) or two names to the
   * same one (`CODE_MODE_TOOL_NAME_COLLISION`); `where` (such as `"Agent 'support' code mode"`)
   * starts the message. With `options.onNameConflict`, it renames or leaves out such tools instead
   * (see {@link ToolCatalogOptions}).
   */
  static fromTools(tools: readonly Tool[], where: string, options: ToolCatalogOptions = {}): ToolCatalog {
    const { onNameConflict } = options;
    const byIdentifier = new Map<string, Tool>();
    const entries: CatalogTool[] = [];
    for (const tool of tools) {
      let identifier = toIdentifier(tool.name);
      if (onNameConflict !== undefined) {
        const renamed = reservedIdentifiers.has(identifier) ? `_${identifier}` : identifier;
        const earlier = byIdentifier.get(renamed);
        if (earlier !== undefined || reservedIdentifiers.has(renamed)) {
          onNameConflict(
            `${where}: tool '${tool.name}' was left out of the program catalog: it would be tools.${renamed}, ${earlier === undefined ? 'a name code mode reserves' : `the name of tool '${earlier.name}'`}.`,
          );
          continue;
        }
        if (renamed !== identifier) {
          onNameConflict(
            `${where}: tool '${tool.name}' is tools.${renamed} in programs: tools.${identifier} is a name code mode reserves.`,
          );
        }
        identifier = renamed;
      } else if (reservedIdentifiers.has(identifier)) {
        throw new CodeModeConfigurationError(
          `${where}: tool '${tool.name}' would be tools.${identifier}, a name code mode reserves. Rename the tool, or keep it model-facing by listing it in \`except\`.`,
          { code: 'CODE_MODE_TOOL_NAME_RESERVED', tool: tool.name, identifier },
        );
      }
      const earlier = byIdentifier.get(identifier);
      if (earlier !== undefined) {
        const message =
          earlier.name === tool.name
            ? `${where}: tool '${tool.name}' is given twice. Remove one of them.`
            : `${where}: tools '${earlier.name}' and '${tool.name}' would both be tools.${identifier}. Rename one of them, or keep one model-facing by listing it in \`except\`.`;
        throw new CodeModeConfigurationError(message, {
          code: 'CODE_MODE_TOOL_NAME_COLLISION',
          tools: [earlier.name, tool.name],
          identifier,
        });
      }
      byIdentifier.set(identifier, tool);
      entries.push(
        Object.freeze({
          name: tool.name,
          identifier,
          description: tool.description,
          inputSchema: frozenSchema(tool.inputJsonSchema),
          outputSchema: tool.outputJsonSchema === undefined ? undefined : frozenSchema(tool.outputJsonSchema),
          declaration: declare(tool, identifier),
        }),
      );
    }
    return new ToolCatalog(entries);
  }

  /** The tool with this name, identifier or `tools.<identifier>`; `undefined` when there is none. */
  find(name: string): CatalogTool | undefined {
    return this.#byName.get(name);
  }

  /** The catalog as plain JSON, what the guest's `tools` and `ALL_TOOLS` are built from. */
  toJSON(): readonly CatalogToolJson[] {
    return this.#json;
  }
}
