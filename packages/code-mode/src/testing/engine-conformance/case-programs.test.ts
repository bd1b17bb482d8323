import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { defineHostEngine } from '../../define-host-engine.js';
import { programsIn, registeredCasePrograms } from './case-programs.js';
import { describeEngineConformance } from './describe-engine-conformance.js';

// A Python engine no host ever starts for: registering the suite for it records every case's
// programs, which the tests below read. Its cases are collected, never run.
const pythonStub = defineHostEngine({
  name: 'python-stub',
  language: 'python',
  runtimePaths: [],
  placements: ['process'],
  instructions: () => '',
  host: { script: '/nonexistent/host.js' },
});
describe.skip('the suite, collected for a Python engine (skipped: only its programs are read, by the tests below)', () => {
  describeEngineConformance({ engine: pythonStub });
});

/** The Python program (or programs, by name) of every case that has one, with the case's name. */
function pythonPrograms(): { readonly name: string; readonly source: string }[] {
  const programs: { name: string; source: string }[] = [];
  for (const { name, programs: sources } of registeredCasePrograms()) {
    const python = sources.python;
    if (typeof python === 'string') programs.push({ name, source: python });
    else
      for (const [part, source] of Object.entries(python ?? {}))
        programs.push({ name: `${name} (${part})`, source });
  }
  return programs;
}

// Compiles each program as the engine runs it (top-level await allowed) and prints the failures.
const compileEach = `
import ast, json, sys
failures = []
for program in json.load(sys.stdin):
    try:
        compile(program["source"], "<program>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        failures.append(f"{program['name']}: {error.msg} (line {error.lineno})")
print(json.dumps(failures))
`;

const hasPython3 = spawnSync('python3', ['--version']).status === 0;

describe("the conformance cases' programs", () => {
  it('gives every case a Python program, or says why it is JavaScript-only', () => {
    const cases = registeredCasePrograms();
    expect(cases.length).toBeGreaterThan(50);
    const unwritten = cases.filter(
      ({ programs }) => programs.python === undefined && !programs.javascriptOnly,
    );
    expect(unwritten.map(({ name }) => name)).toEqual([]);
  });

  // python3 checks the syntax here, ahead of a Python engine's run; without it the engine's run does.
  it.skipIf(!hasPython3)(
    `compiles every Python program with python3${hasPython3 ? '' : ' (skipped: no python3 on this machine)'}`,
    () => {
      const programs = pythonPrograms();
      expect(programs.length).toBeGreaterThan(50);
      const run = spawnSync('python3', ['-c', compileEach], {
        input: JSON.stringify(programs),
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      // The one program written not to compile, and only it, fails.
      expect(JSON.parse(run.stdout)).toEqual([
        'reports a syntax error with its line and column, running nothing: invalid syntax (line 2)',
      ]);
    },
  );

  it('names why a case is skipped for a language it has no program in', () => {
    const javascriptOnly = { javascript: 'Symbol("s")', javascriptOnly: 'Python has no Symbol' };
    expect(programsIn(javascriptOnly, 'python')).toEqual({
      skipReason: 'JavaScript-only: Python has no Symbol',
    });
    expect(programsIn({ javascript: '1', python: '1' }, 'ruby')).toEqual({
      skipReason: 'no ruby program for this case yet',
    });
    expect(programsIn({ javascript: '1', python: '2' }, 'python')).toEqual({ sources: '2' });
  });
});
