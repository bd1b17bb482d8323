// Passed to `node --import`: installs module-list-hooks.js in the process it starts.
import { register } from 'node:module';

register('./module-list-hooks.js', import.meta.url);
