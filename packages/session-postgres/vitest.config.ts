import { ghostProject } from '@ghost/vitest-config';

const project = ghostProject('session-postgres');
// Vitest hands ssr.resolve.conditions to Node as --conditions. With 'import' among them, pg
// (CommonJS) would get the ES module build of pg-pool from require() and fail to load. Vite adds
// 'import' or 'require' itself for what it resolves, so the source condition is the one to keep.
if (project.ssr?.resolve !== undefined) project.ssr.resolve.conditions = ['@ghost/source', 'node'];

export default project;
