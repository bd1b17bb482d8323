import { spawnSync } from 'node:child_process';
import { defineTool, type Tool } from '@ghost/core';
import { type TSchema, Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { guestGlobals } from './guest-api.js';
import { pythonDeclarations, pythonToolName } from './python-declarations.js';
import { ToolCatalog } from './tool-catalog.js';

function tool(name: string, description: string, input: TSchema, output?: TSchema): Tool {
  return defineTool({
    name,
    description,
    input: input as never,
    ...(output === undefined ? {} : { output: output as never }),
    execute: () => null,
  }) as unknown as Tool;
}

const lookupOrder = tool(
  'lookup_order',
  'Looks an order up by its number.',
  Type.Object({
    orderId: Type.String({ description: 'The order number, such as A-1001.' }),
    verbose: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  }),
  Type.Object({
    id: Type.String(),
    status: Type.Union([Type.Literal('open'), Type.Literal('shipped')]),
    total: Type.Number(),
    lines: Type.Array(Type.Object({ sku: Type.String(), quantity: Type.Integer() })),
    note: Type.Union([Type.String(), Type.Null()]),
  }),
);

/** Tools whose names and schemas Python cannot write plainly. */
const awkward = [
  tool(
    'help-center-lookup',
    'Finds the help-center entry for a topic.',
    Type.Object({ topic: Type.String() }),
  ),
  tool('import', 'Imports a file.', Type.Object({ path: Type.String() })),
  tool('crm-contacts', 'Lists contacts.', Type.Object({})),
  tool(
    'update-contact',
    'Updates a contact.',
    Type.Object({ 'first-name': Type.String(), class: Type.Optional(Type.String()) }),
  ),
  tool('ping', 'Answers pong.', Type.Object({}, { additionalProperties: false })),
  tool(
    'tag',
    'Tags "things" \\ with """quotes""".\nSecond line."',
    Type.Object({ tags: Type.Record(Type.String(), Type.Integer()) }),
  ),
];

const hasPython = spawnSync('python3', ['--version']).status === 0;

/** Runs `source` in the machine's python3 and returns what it printed; throws what it wrote to stderr. */
function runPython(source: string): string {
  const run = spawnSync('python3', ['-c', source], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python3 failed:\n${run.stderr}\n--- source ---\n${source}`);
  return run.stdout;
}

describe('pythonToolName', () => {
  it.each([
    ['lookup_order', 'lookup_order'],
    ['import', 'import_'],
    ['None', 'None_'],
    ['match', 'match'],
  ])('names %j as %j', (identifier, name) => {
    expect(pythonToolName(identifier)).toBe(name);
  });
});

describe('pythonDeclarations', () => {
  it('declares each tool as an async method with keyword arguments, TypedDicts for objects and a docstring', () => {
    const declarations = pythonDeclarations(ToolCatalog.fromTools([lookupOrder], 'test'));
    expect(declarations).toContain(`class LookupOrderOutputLinesItem(TypedDict):
    sku: str
    quantity: int

class LookupOrderOutput(TypedDict):
    id: str
    status: Literal["open"] | Literal["shipped"]
    total: float
    lines: list[LookupOrderOutputLinesItem]
    note: str | None`);
    expect(declarations).toContain(`    @staticmethod
    async def lookup_order(*, orderId: str, verbose: bool = ..., limit: int = ...) -> LookupOrderOutput:
        """Looks an order up by its number.

        Args:
            orderId: The order number, such as A-1001.
            limit: minimum: 1, maximum: 50
        """`);
  });

  it('lists every global of the guest API in its Python form, and ToolError', () => {
    const declarations = pythonDeclarations(ToolCatalog.fromTools([lookupOrder], 'test'));
    for (const global of guestGlobals) {
      if (global.python.declaration !== undefined) expect(declarations).toContain(global.python.declaration);
    }
    expect(declarations).toContain('class ToolError(Exception):');
    expect(declarations).toContain('async def call(name: str, args: dict[str, Any] | None = None) -> Any:');
    expect(declarations).toContain('async def parallel(');
  });

  it('gives a keyword its trailing underscore, a key Python cannot name a dict argument, and an open object an optional dict', () => {
    const declarations = pythonDeclarations(ToolCatalog.fromTools(awkward, 'test'));
    expect(declarations).toContain('async def help_center_lookup(*, topic: str) -> Any:');
    expect(declarations).toContain('async def import_(*, path: str) -> Any:');
    expect(declarations).toContain('async def crm_contacts(args: dict[str, Any] | None = None) -> Any:');
    expect(declarations).toContain(`UpdateContactInput = TypedDict("UpdateContactInput", {
    "first-name": str,
    "class": NotRequired[str],
})`);
    expect(declarations).toContain('async def update_contact(args: UpdateContactInput) -> Any:');
    expect(declarations).toContain('async def ping() -> Any:');
    expect(declarations).toContain('async def tag(*, tags: dict[str, int]) -> Any:');
  });

  // python3 is what checks that the stub is valid Python; the machines Ghost is built on have it.
  it.skipIf(!hasPython)(
    'is Python that runs, with each docstring reading exactly as the description (skipped where python3 is missing)',
    () => {
      const declarations = pythonDeclarations(ToolCatalog.fromTools([lookupOrder, ...awkward], 'test'));
      const printed = runPython(
        `${declarations}\nimport json\nimport inspect\nprint(json.dumps([inspect.getdoc(tools.tag), sorted(LookupOrderOutput.__required_keys__), sorted(UpdateContactInput.__optional_keys__)]))`,
      );
      expect(JSON.parse(printed)).toEqual([
        'Tags "things" \\ with """quotes""".\nSecond line."',
        ['id', 'lines', 'note', 'status', 'total'],
        ['class'],
      ]);
    },
  );

  it('never lets a schema class take the name of a global', () => {
    // `tool`'s `info` and `error` objects would be classes ToolInfo and ToolError.
    const clash = tool(
      'tool',
      'Clashes.',
      Type.Object({ info: Type.Object({ a: Type.String() }), error: Type.Object({ b: Type.String() }) }),
    );
    const declarations = pythonDeclarations(ToolCatalog.fromTools([clash], 'test'));
    expect(declarations.match(/^class ToolError\(/gm)).toHaveLength(1);
    expect(declarations.match(/^class ToolInfo\(/gm)).toHaveLength(1);
    expect(declarations).toContain('async def tool(*, info: ToolInfo2, error: ToolError2) -> Any:');
    if (hasPython) runPython(declarations);
  });
});
