import { ghostProject, sourceConditions } from '@ghost/vitest-config';

// @opentelemetry/api exports an ES build under the `module` condition whose imports have no file
// extensions, which Node cannot load; Node itself never picks `module`, so neither do these tests.
const conditions = sourceConditions.filter((condition) => condition !== 'module');
const project = ghostProject('otel');

const config: ReturnType<typeof ghostProject> = {
  ...project,
  resolve: { ...project.resolve, conditions },
  ssr: { ...project.ssr, resolve: { ...project.ssr?.resolve, conditions, externalConditions: conditions } },
};

export default config;
