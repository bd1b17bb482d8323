#!/usr/bin/env node
// `ghost-doctor`: prints what this machine's sandbox enforces, and exits 1 when it cannot contain programs.
import { bwrapSandbox } from './bwrap-sandbox.js';
import { formatDoctorReport } from './doctor.js';

const detection = await bwrapSandbox.detect();
console.log(formatDoctorReport(bwrapSandbox.name, detection));
process.exitCode = detection.available ? 0 : 1;
