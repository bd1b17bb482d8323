// `node --import ./module-count.js`: registers module-count-hooks.js before the measured program runs.
import { register } from 'node:module';

register('./module-count-hooks.js', import.meta.url);
