#!/usr/bin/env node
// `ghost-doctor`: prints what this machine's sandbox enforces, and exits 1 when it cannot contain programs.
// It always proves the sandbox afresh: a cached detection would repeat what held when it was made.
import { createBwrapSandbox } from './bwrap-sandbox.js';
import { formatDoctorReport } from './doctor.js';

const backend = createBwrapSandbox({ detectionCache: 'off' });
const detection = await backend.detect();
console.log(formatDoctorReport(backend.name, detection));
process.exitCode = detection.available ? 0 : 1;
