import { nodeProbe } from './node-probe.js';

/** Reports that it started, then spins the CPU for ever. */
export const spinCpuProbe = nodeProbe(`
report({ started: true });
for (;;) {}
`);

/** Reports that it started, then allocates and touches `mebibytes` MiB, 1 MiB at a time. */
export function memoryBombProbe(mebibytes: number): string {
  return nodeProbe(`
report({ started: true });
const kept = [];
for (let index = 0; index < ${mebibytes}; index++) kept.push(Buffer.alloc(1024 * 1024, index));
report({ allocatedMebibytes: kept.length });
`);
}

/** Writes up to `bytes` into `fill.bin` in the workspace, 64 KiB at a time; reports how far it got. */
export function diskFillProbe(bytes: number): string {
  return nodeProbe(`
const fs = require('node:fs');
const fd = fs.openSync('fill.bin', 'w');
const chunk = Buffer.alloc(64 * 1024, 1);
let written = 0;
const filled = await attempt(() => {
  while (written < ${bytes}) written += fs.writeSync(fd, chunk);
});
report({ written, code: filled.isAllowed ? undefined : filled.code });
`);
}

/** Opens one workspace file `count` times without closing it; reports how many opened. */
export function openFilesProbe(count: number): string {
  return nodeProbe(`
const fs = require('node:fs');
fs.writeFileSync('open-me', '');
const descriptors = [];
const opened = await attempt(() => {
  while (descriptors.length < ${count}) descriptors.push(fs.openSync('open-me', 'r'));
});
report({ opened: descriptors.length, code: opened.isAllowed ? undefined : opened.code });
`);
}
