// Module loader hooks for modulesLoadedBy: every module Node loads is appended to the file named by
// MODULE_LIST, one URL a line.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.MODULE_LIST, `${url}\n`);
  return nextLoad(url, context);
}
