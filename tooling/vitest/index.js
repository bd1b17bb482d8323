// Shared vitest settings for one Ghost package. Tests resolve workspace packages to their
// `src/` through the `@ghost/source` export condition, so nothing needs building first.
import { fileURLToPath } from 'node:url';
import { defineProject, mergeConfig } from 'vitest/config';

export const sourceConditions = ['@ghost/source', 'import', 'module', 'node', 'default'];

/**
 * @param {string} name project name shown in the test output
 * @param {import('vitest/config').UserWorkspaceConfig} [overrides]
 */
export function ghostProject(name, overrides = {}) {
  return mergeConfig(
    defineProject({
      resolve: { conditions: sourceConditions },
      ssr: { resolve: { conditions: sourceConditions, externalConditions: sourceConditions } },
      test: {
        name,
        include: ['src/**/*.test.ts'],
        environment: 'node',
        pool: 'forks',
        testTimeout: 20_000,
        hookTimeout: 20_000,
        restoreMocks: true,
        // Every test fails that lets a rejection or an exception go unhandled (see the file).
        setupFiles: [fileURLToPath(new URL('./unhandled-errors.js', import.meta.url))],
      },
    }),
    overrides,
  );
}
