import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
    reporters: ['default', './tooling/vitest/summary-reporter.js'],
  },
});
