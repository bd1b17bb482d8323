import { ghostProject } from '@ghost/vitest-config';

export default ghostProject('mcp-client');
