import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  ConfigurationError,
  GhostError,
  SandboxUnavailableError,
  ToolError,
} from './errors.js';

describe('GhostError', () => {
  it('carries a code, details and cause', () => {
    const cause = new Error('root');
    const error = new ConfigurationError('Bad option.', {
      code: 'OPTION_UNKNOWN',
      details: { option: 'x' },
      cause,
    });
    expect(error.code).toBe('OPTION_UNKNOWN');
    expect(error.details).toEqual({ option: 'x' });
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('ConfigurationError');
    expect(new SandboxUnavailableError('no bwrap').code).toBe('SANDBOX_UNAVAILABLE');
  });

  it('isInstance recognises the class and its bases, also across package copies', () => {
    const error = new ToolError('nope');
    expect(ToolError.isInstance(error)).toBe(true);
    expect(GhostError.isInstance(error)).toBe(true);
    expect(CancelledError.isInstance(error)).toBe(false);
    expect(GhostError.isInstance(new Error('plain'))).toBe(false);
    expect(GhostError.isInstance(null)).toBe(false);

    // What an error from a duplicated install looks like: same marker, different class object.
    const foreign = Object.assign(new Error('copy'), {
      [Symbol.for('ghost.error')]: ['ToolError', 'GhostError'],
    });
    expect(ToolError.isInstance(foreign)).toBe(true);
    expect(ConfigurationError.isInstance(foreign)).toBe(false);
  });
});
