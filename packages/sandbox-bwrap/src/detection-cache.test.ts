import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDetectionCacheDirectory } from './detection-cache.js';

describe('defaultDetectionCacheDirectory', () => {
  it('uses $XDG_CACHE_HOME when it is absolute, and ~/.cache otherwise, as the XDG base directory rules say', () => {
    expect(defaultDetectionCacheDirectory({ XDG_CACHE_HOME: '/var/cache/app' })).toBe('/var/cache/app/ghost');
    expect(defaultDetectionCacheDirectory({ XDG_CACHE_HOME: 'relative' })).toBe(
      join(homedir(), '.cache', 'ghost'),
    );
    expect(defaultDetectionCacheDirectory({})).toBe(join(homedir(), '.cache', 'ghost'));
  });
});
