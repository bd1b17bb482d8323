export { sandboxExecPath, seatbeltArguments } from './seatbelt-arguments.js';
export { type SeatbeltProfileOptions, seatbeltProfile } from './seatbelt-profile.js';
