/**
 * The message of something thrown or rejected with, whatever it is: code in a rejection handler
 * must not throw itself (reading `.message` of `undefined` would), or its own promise rejects
 * with nobody to handle it.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string') {
    return (error as Error).message;
  }
  try {
    return String(error);
  } catch {
    return 'an error that cannot be described';
  }
}
