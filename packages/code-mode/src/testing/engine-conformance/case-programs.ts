import { it } from 'vitest';

/** The sources of a case's programs in one language: one program, or several by name. */
export type ProgramSources = string | Readonly<Record<string, string>>;

/**
 * A conformance case's programs, in each language the case is written in: JavaScript always,
 * Python where the behaviour it tests is the language's too. Every language gives the same
 * programs (the same names when there are several), so the case's body runs them alike.
 */
export interface CasePrograms<Sources extends ProgramSources> {
  /** The programs in JavaScript. */
  readonly javascript: Sources;
  /** The programs in Python, for engines whose language is `'python'`. */
  readonly python?: Sources;
  /**
   * Why the case is JavaScript's alone, when it tests something only JavaScript has (replacing
   * `Promise.prototype.then`, `eval`'s completion values, `toJSON`): shown in the case's name where
   * an engine of another language skips it.
   */
  readonly javascriptOnly?: string;
}

/** The languages conformance cases are written in. */
type ConformanceLanguage = Exclude<keyof CasePrograms<string>, 'javascriptOnly'>;

/** Something that differs by language in a case written in both, such as an expected message. */
export interface ByLanguage<Value> {
  readonly javascript: Value;
  readonly python: Value;
}

/** A case's body, given its programs in the engine's language. */
type ProgramCaseBody<Sources> = (sources: Sources) => Promise<void>;

/** Registers a case whose programs are written per language (see {@link itWithPrograms}). */
export interface ItWithPrograms {
  (name: string, programs: CasePrograms<string>, body: ProgramCaseBody<string>, timeoutMs?: number): void;
  <Sources extends Readonly<Record<string, string>>>(
    name: string,
    programs: CasePrograms<Sources>,
    body: ProgramCaseBody<Sources>,
    timeoutMs?: number,
  ): void;
}

/**
 * The programs of `programs` in `language`, or why the case has none there: the reason a case
 * skipped for an engine of that language shows in its name.
 */
export function programsIn<Sources extends ProgramSources>(
  programs: CasePrograms<Sources>,
  language: string,
): { readonly sources: Sources } | { readonly skipReason: string } {
  const sources = isConformanceLanguage(language) ? programs[language] : undefined;
  if (sources !== undefined) return { sources };
  if (programs.javascriptOnly !== undefined) {
    return { skipReason: `JavaScript-only: ${programs.javascriptOnly}` };
  }
  return { skipReason: `no ${language} program for this case yet` };
}

/** A case registered by {@link itWithPrograms}, with its programs in every language. */
export interface RegisteredCase {
  readonly name: string;
  readonly programs: CasePrograms<ProgramSources>;
}

const registeredCases: RegisteredCase[] = [];

/**
 * Every case {@link itWithPrograms} has registered in this test file so far, run or skipped: for
 * checks of the programs themselves, such as that each Python program compiles.
 */
export function registeredCasePrograms(): readonly RegisteredCase[] {
  return registeredCases;
}

/**
 * Makes the function that registers cases for an engine of `language`: each case gives its
 * programs per language, and its body gets those of `language`. A case with no program in
 * `language`, or any case when `skipReason` says why it cannot run with this engine or here, is
 * registered skipped with the reason in its name
 * (`… (skipped: JavaScript-only: replaces Promise.prototype.then)`), so a report shows every case
 * the suite has and why any did not run.
 */
export function itWithPrograms(language: string, skipReason?: string): ItWithPrograms {
  return <Sources extends ProgramSources>(
    name: string,
    programs: CasePrograms<Sources>,
    body: ProgramCaseBody<Sources>,
    timeoutMs?: number,
  ) => {
    registeredCases.push({ name, programs });
    const found = programsIn(programs, language);
    const reason = 'skipReason' in found ? found.skipReason : skipReason;
    if (reason === undefined && 'sources' in found) it(name, () => body(found.sources), timeoutMs);
    else it.skip(`${name} (skipped: ${reason})`, () => {}, timeoutMs);
  };
}

/**
 * `values` in `language`, for what differs by language in a case with programs in both (an error's
 * class, how a value prints). Called from a case's body, which runs only in a language the case
 * has programs for.
 */
export function inLanguage<Value>(language: string, values: ByLanguage<Value>): Value {
  if (!isConformanceLanguage(language)) {
    throw new Error(
      `A conformance case runs a ${language} program but says nothing of what to expect in ${language}: add ${language} to its inLanguage values.`,
    );
  }
  return values[language];
}

function isConformanceLanguage(language: string): language is ConformanceLanguage {
  return language === 'javascript' || language === 'python';
}
