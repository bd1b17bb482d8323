#!/usr/bin/env node
import { formatDoctorReport } from './doctor.js';
// `ghost-doctor`: prints what this machine's native sandbox enforces (bubblewrap on Linux, seatbelt
// on macOS), and exits 1 when it cannot contain programs.
import { doctorBackend } from './doctor-backend.js';

try {
  const backend = await doctorBackend(process.platform);
  const detection = await backend.detect();
  console.log(formatDoctorReport(backend.name, detection));
  process.exitCode = detection.available ? 0 : 1;
} catch (error) {
  console.log(`ghost-doctor: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
