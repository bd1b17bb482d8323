import { ghostProject } from '@ghost/vitest-config';

export default ghostProject('engine-python');
