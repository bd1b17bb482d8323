// The host's side of round-trip-floor.js: `node round-trip-floor-child.js <mode> <calls>`, started
// with the protocol channel on fd 3 as an engine host is. It plays a program that awaits `calls`
// tool calls one after another: it sends a `tool_calls` frame, waits for the `tool_results` frame,
// and sends the next, timing each round trip as the guest would see it. Then it sends one
// `summary` frame with the round trips (µs) and exits.
//   mode `bytes`: the frames are fixed buffers, only their 4-byte length is read (no JSON);
//   mode `codec`: every frame is encoded and decoded with code mode's frame codec, as a host does.
import { Socket } from 'node:net';
import { encodeFrame, FrameDecoder } from '../packages/code-mode/dist/shared/frame-codec.js';

const [mode, callsText] = process.argv.slice(2);
const calls = Number(callsText);
const programId = 'p1';
const callFrame = (index) => ({
  type: 'tool_calls',
  programId,
  calls: [{ callId: String(index), name: 'noop', input: {} }],
});
const fixedCall = encodeFrame(callFrame(1));

const socket = new Socket({ fd: 3, readable: true, writable: true });
const decoder = new FrameDecoder();
const roundTrips = [];
let sentAt = 0;
let index = 0;
let pending = Buffer.alloc(0);

function sendNext() {
  index += 1;
  sentAt = performance.now();
  socket.write(mode === 'bytes' ? fixedCall : encodeFrame(callFrame(index)));
}

/** How many whole frames `chunk` completes, reading only their length headers. */
function countRawFrames(chunk) {
  pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  let count = 0;
  while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
    pending = pending.subarray(4 + pending.readUInt32BE(0));
    count += 1;
  }
  return count;
}

socket.on('data', (chunk) => {
  const frames = mode === 'bytes' ? countRawFrames(chunk) : decoder.push(chunk).length;
  for (let frame = 0; frame < frames; frame += 1) {
    roundTrips.push((performance.now() - sentAt) * 1000);
    if (index < calls) sendNext();
    else socket.end(encodeFrame({ type: 'summary', roundTrips }), () => process.exit(0));
  }
});
socket.on('error', () => process.exit(1));
sendNext();
