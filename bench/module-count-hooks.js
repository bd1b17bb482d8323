// Module loader hooks for cold-start.js's counting run (never a timed one): every module Node loads
// is appended to the file named by GHOST_BENCH_MODULE_LIST, one URL a line.
import { appendFileSync } from 'node:fs';

const list = process.env.GHOST_BENCH_MODULE_LIST;

export async function load(url, context, nextLoad) {
  if (list !== undefined && !url.startsWith('node:')) appendFileSync(list, `${url}\n`);
  return nextLoad(url, context);
}
