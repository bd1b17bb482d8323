import { guestGlobals } from './guest-api.js';
import {
  docstring,
  isPlainPythonName,
  PythonClasses,
  pascalCase,
  pythonKeywords,
  pythonSchemaNotes,
  schemaToPython,
} from './json-schema-python.js';
import { isSchemaObject } from './json-schema-reading.js';
import type { CatalogTool, ToolCatalog } from './tool-catalog.js';

/** Python only: a JavaScript program's failed call rejects with an `Error` instead. */
const toolErrorDeclaration = `class ToolError(Exception):
    """Raised by a tool call that fails; str(error) says why."""`;

/** Names the declarations use for their own globals, so no schema's class takes one. */
const takenNames = ['ToolInfo', 'ToolError', ...guestGlobals.map((global) => global.python.name)];

/**
 * The Python name of a tool's method: its identifier, with `_` after a Python keyword
 * (`tools.import_`, as PEP 8 advises). Tool names hold only letters, digits, `_` and `-`, so
 * every identifier is otherwise a Python name too.
 *
 * @example
 * ```ts
 * pythonToolName('lookup_order'); // 'lookup_order'
 * pythonToolName('import'); // 'import_'
 * ```
 */
export function pythonToolName(identifier: string): string {
  return pythonKeywords.has(identifier) ? `${identifier}_` : identifier;
}

interface ToolSignature {
  readonly parameters: string;
  /** Lines of the docstring's `Args:` section, one per keyword argument. */
  readonly args: readonly string[];
}

/** Keyword-only parameters when every property is a plain name, else one `args` dict. */
function signature(tool: CatalogTool, classes: PythonClasses): ToolSignature {
  const schema = tool.inputSchema;
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  const hint = pascalCase(tool.identifier);
  if (names.length === 0) {
    return schema.type === 'object' && schema.additionalProperties === false
      ? { parameters: '', args: [] }
      : { parameters: 'args: dict[str, Any] | None = None', args: [] };
  }
  if (!names.every(isPlainPythonName)) {
    return { parameters: `args: ${schemaToPython(schema, `${hint}Input`, classes)}`, args: [] };
  }
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  const parameters: string[] = [];
  const args: string[] = [];
  for (const name of names) {
    const type = schemaToPython(properties[name], `${hint}${pascalCase(name)}`, classes);
    // `= ...` is the stub spelling of "has a default": leave it out to use the tool's own.
    parameters.push(required.has(name) ? `${name}: ${type}` : `${name}: ${type} = ...`);
    const notes = pythonSchemaNotes(properties[name]);
    if (notes.length > 0) args.push(`    ${name}: ${notes.join(' ').replaceAll('\n', ' ')}`);
  }
  return { parameters: `*, ${parameters.join(', ')}`, args };
}

function declareTool(tool: CatalogTool, classes: PythonClasses): string {
  const name = pythonToolName(tool.identifier);
  const { parameters, args } = signature(tool, classes);
  const output =
    tool.outputSchema === undefined
      ? 'Any'
      : schemaToPython(tool.outputSchema, `${pascalCase(tool.identifier)}Output`, classes);
  const lines = [tool.description.trim()];
  if (args.length > 0) lines.push('', 'Args:', ...args);
  const body = docstring(lines, '        ') || '        ...\n';
  return `    @staticmethod\n    async def ${name}(${parameters}) -> ${output}:\n${body.trimEnd()}`;
}

const toolsMethods = `    @staticmethod
    async def call(name: str, args: dict[str, Any] | None = None) -> Any:
        """Calls a tool by its name, its identifier or "tools.<identifier>"."""

    @staticmethod
    async def parallel(*calls: Callable[[], Awaitable[Any]] | Awaitable[Any]) -> list[Any]:
        """Runs the calls at the same time (asyncio.gather works too); the results keep their order."""`;

/**
 * The Python declarations a program runs against, made from the same catalog (and so the same
 * JSON Schemas the broker validates with) as the TypeScript ones: a `TypedDict` for each object
 * an input or output holds, `class tools` with an `async def` per tool (keyword arguments from
 * the input schema, the description as its docstring, each argument's description under
 * `Args:`), then `ToolError` and the guest API's other globals (`guestGlobals`' Python forms). Written as a stub, which
 * the model reads, never runs.
 *
 * @example
 * ```ts
 * const instructions = `Write Python. You can use:\n${pythonDeclarations(catalog)}`;
 * ```
 */
export function pythonDeclarations(catalog: ToolCatalog): string {
  const classes = new PythonClasses(takenNames);
  const methods = catalog.tools.map((tool) => declareTool(tool, classes));
  const imports = 'from typing import Any, Awaitable, Callable, Literal, NoReturn, NotRequired, TypedDict';
  const tools = `class tools:\n    """The tools this program can call; await each for its JSON result."""\n\n${[...methods, toolsMethods].join('\n\n')}`;
  const globals = guestGlobals.flatMap((global) => global.python.declaration ?? []);
  return [imports, classes.text, tools, toolErrorDeclaration, ...globals]
    .filter((part) => part !== '')
    .join('\n\n');
}
