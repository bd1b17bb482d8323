import { ghostProject } from '@ghost/vitest-config';

// The browser test starts Chromium and walks every page of the built site.
export default ghostProject('docs', { test: { testTimeout: 120_000, hookTimeout: 60_000 } });
