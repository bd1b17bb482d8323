import ts from 'typescript';

// TypeScript checks shared by the catalog's tests: what the model is shown must compile.

/** Syntax errors only: what `ts.createSourceFile` reports while parsing. */
export function parseProblems(source: string): string[] {
  const file = ts.createSourceFile('declarations.ts', source, ts.ScriptTarget.ES2022, true);
  const diagnostics = (file as unknown as { parseDiagnostics: readonly ts.Diagnostic[] }).parseDiagnostics;
  const problems: string[] = [];
  for (const diagnostic of diagnostics)
    problems.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  return problems;
}

/** Syntax and type errors, with the strictest settings a reader of the declarations could use. */
export function typeProblems(source: string): string[] {
  const fileName = '/declarations.ts';
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, languageVersion, true)
      : readSourceFile(name, languageVersion, ...rest);
  const program = ts.createProgram([fileName], options, host);
  const problems: string[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    problems.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  }
  return problems;
}
