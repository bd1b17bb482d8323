import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
    reporters: ['default', '@ghost/vitest-config/summary-reporter'],
  },
});
