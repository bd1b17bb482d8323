import { ghostProject } from '@ghost/vitest-config';

// The end-to-end test starts the server, a browser and sandboxed programs.
export default ghostProject('chat-web', { test: { testTimeout: 60_000, hookTimeout: 60_000 } });
