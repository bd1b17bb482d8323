import { ToolError, ToolResult } from '@ghost/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type McpServerTools, mcpTools } from './index.js';
import {
  directContext,
  everythingEntry,
  failureOf,
  newMarker,
  processesWith,
  waitUntilGone,
} from './test-support/processes.js';

function toolNamed(server: McpServerTools, name: string) {
  const tool = server.tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`No tool ${name} among ${server.tools.map((each) => each.name).join(', ')}`);
  return tool;
}

describe('mcpTools() over stdio, against server-everything', () => {
  const marker = newMarker();
  let server: McpServerTools;

  beforeAll(async () => {
    process.env.GHOST_TEST_PARENT_SECRET = 'must-not-leak';
    server = await mcpTools({
      name: 'everything',
      command: process.execPath,
      args: [everythingEntry, 'stdio', marker],
      env: { GREETING: 'named-by-the-application' },
    });
  }, 30_000);

  afterAll(async () => {
    delete process.env.GHOST_TEST_PARENT_SECRET;
    await server?.close();
  });

  test('lists the tools with prefixed names, descriptions, input and output schemas', () => {
    const names = server.tools.map((tool) => tool.name);
    expect(names).toContain('everything_echo');
    expect(names).toContain('everything_get-structured-content');
    const echo = toolNamed(server, 'everything_echo');
    expect(echo.description).toMatch(/echo/i);
    expect(echo.inputJsonSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
    });
    expect(echo.outputJsonSchema).toBeUndefined();
    const weather = toolNamed(server, 'everything_get-structured-content');
    expect(weather.outputJsonSchema).toMatchObject({
      type: 'object',
      properties: { temperature: { type: 'number' }, conditions: { type: 'string' } },
    });
  });

  test('a text result becomes the text value', async () => {
    const result = await toolNamed(server, 'everything_echo').execute(
      { message: 'hi there' },
      directContext(),
    );
    expect(result).toBeInstanceOf(ToolResult);
    expect((result as ToolResult).value).toBe('Echo: hi there');
  });

  test('structuredContent becomes the value, and it matches the output schema', async () => {
    const tool = toolNamed(server, 'everything_get-structured-content');
    const result = (await tool.execute({ location: 'Chicago' }, directContext())) as ToolResult;
    expect(result.value).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
    expect(tool.validateOutput(result.value)).toEqual([]);
  });

  test('an image becomes an artifact beside the text', async () => {
    const result = (await toolNamed(server, 'everything_get-tiny-image').execute(
      {},
      directContext(),
    )) as ToolResult;
    expect(result.artifacts.length).toBeGreaterThan(0);
    const [image] = result.artifacts;
    expect(image?.mediaType).toBe('image/png');
    expect(
      Buffer.from(image?.data as Uint8Array)
        .subarray(1, 4)
        .toString('latin1'),
    ).toBe('PNG');
  });

  test('an error result (the server rejects the arguments) becomes a ToolError', async () => {
    const tool = toolNamed(server, 'everything_get-structured-content');
    // execute() directly, past Ghost's own validation, so the server itself answers isError.
    const failure = await failureOf(() => tool.execute({ location: 'Atlantis' }, directContext()));
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/location|invalid/i);
  });

  test("the server sees only the environment the application named, none of the parent's", async () => {
    const result = (await toolNamed(server, 'everything_get-env').execute({}, directContext())) as ToolResult;
    const environment = JSON.parse(result.value as string) as Record<string, string>;
    expect(process.env.GHOST_TEST_PARENT_SECRET).toBe('must-not-leak');
    expect(environment).toEqual({ GREETING: 'named-by-the-application' });
  });

  test('close() ends the server process and its watchdog', async () => {
    expect(processesWith(marker).length).toBeGreaterThan(0);
    await server.close();
    expect(processesWith(marker)).toEqual([]);
    await waitUntilGone(marker);
    const echo = toolNamed(server, 'everything_echo');
    const failure = await failureOf(() => echo.execute({ message: 'late' }, directContext()));
    expect((failure as { code?: string }).code).toBe('MCP_SERVER_CLOSED');
  });
});
