import { type EngineInstructionsContext, javascriptInstructions } from '@ghost/code-mode/engine';

/**
 * The QuickJS engine's instructions for the model: code mode's shared JavaScript instructions
 * (how to write a program, what it can use, only what the sandbox really enforces, and the tool
 * declarations), naming QuickJS as the interpreter.
 */
export function quickjsInstructions(context: EngineInstructionsContext): string {
  return javascriptInstructions(context, { interpreter: 'a fresh QuickJS interpreter' });
}
