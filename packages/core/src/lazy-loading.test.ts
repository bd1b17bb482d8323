import { fileURLToPath } from 'node:url';
import { modulesLoadedBy as modulesLoadedIn } from '@ghost/vitest-config/modules-loaded';
import { describe, expect, it } from 'vitest';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs `source` in a fresh Node from this package's directory, so `@ghost/core` is the built
 * package as an application loads it; returns what it printed and the URLs of the modules it
 * loaded, in order, with the `mark:` lines it appended to the list between them.
 */
const modulesLoadedBy = (source: string) => modulesLoadedIn(source, { cwd: packageRoot });

const typeboxModules = (modules: readonly string[]) =>
  modules.filter((url) => /\/typebox\/build\//.test(url));

describe('loading @ghost/core', () => {
  it('imports no typebox module, so importing Ghost stays cheap', async () => {
    const { modules } = await modulesLoadedBy("await import('@ghost/core');");
    expect(modules.some((url) => url.endsWith('/core/dist/index.js'))).toBe(true);
    expect(typeboxModules(modules)).toEqual([]);
  });

  it("compiles a tool's schema when a run first validates a call, with the application's own typebox and none of typebox/compile", async () => {
    const { stdout, modules } = await modulesLoadedBy(`
      import { appendFileSync } from 'node:fs';
      const Type = (await import('typebox')).default;
      const { createRuntime, defineAgent, defineTool } = await import('@ghost/core');
      const { ScriptedModel } = await import('@ghost/core/testing');
      const lookup = defineTool({
        name: 'lookup',
        description: 'Finds a thing.',
        input: Type.Object({ query: Type.String() }),
        execute: ({ query }) => query,
      });
      appendFileSync(process.env.MODULE_LIST, 'mark:defined\\n');
      const model = new ScriptedModel([
        { toolCalls: [{ name: 'lookup', input: { query: 1 } }, { name: 'lookup', input: { query: 'refunds' } }] },
        { text: 'done' },
      ]);
      await defineAgent({ name: 'lazy', model, tools: [lookup] }).ask('?', { runtime: createRuntime() });
      const results = model.calls[1].messages.filter((message) => message.role === 'tool');
      console.log(JSON.stringify(results.map((message) => message.content)));
    `);
    expect(JSON.parse(stdout)).toEqual([expect.stringMatching(/^Invalid tool input: .*\/query/), 'refunds']);
    const defined = modules.indexOf('mark:defined');
    expect(defined).toBeGreaterThan(0);
    // Defining the tool loaded the application's typebox builder, and no schema compiler yet.
    expect(
      typeboxModules(modules.slice(0, defined)).some((url) => url.includes('/build/schema/compile')),
    ).toBe(false);
    const all = typeboxModules(modules);
    // One copy of typebox: every module comes from the same package directory.
    const roots = new Set(all.map((url) => url.slice(0, url.indexOf('/build/'))));
    expect(roots.size).toBe(1);
    expect(all.some((url) => url.includes('/build/schema/compile'))).toBe(true);
    expect(all.some((url) => url.includes('/build/compile/'))).toBe(false);
  });
});
