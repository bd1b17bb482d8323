// A forged engine host for tests (see `hostileHostEngine`): it speaks the fd-3 frame format,
// plays the steps in its first argument and then stays alive until it is killed or its channel
// closes, as a compromised host would. It depends on nothing of code mode's, so it forges bytes
// the way an attacker would, not the way the parent's own encoder would.
import { once } from 'node:events';
import { Socket } from 'node:net';
import type { HostileStep, HostileTemplate } from './hostile-host.js';

/** A summary of one frame the parent sent, for `'$received'`. */
interface ReceivedFrame {
  readonly type: string;
  readonly bytes: number;
  readonly results?: readonly { callId: string; ok: boolean; error?: string; valueBytes?: number }[];
}

const steps = JSON.parse(process.argv[2] ?? '[]') as HostileStep[];
const socket = new Socket({ fd: 3, readable: true, writable: true });
const received: ReceivedFrame[] = [];
let programId = '';
let chunks: Buffer[] = [];
let buffered = 0;
let onReceived: () => void = () => {};

socket.on('error', () => process.exit(0));
socket.on('end', () => process.exit(0));
// Chunks are joined once per frame, so a 64 MiB frame of results costs linear time.
socket.on('data', (chunk: Buffer) => {
  chunks.push(chunk);
  buffered += chunk.length;
  while (buffered >= 4) {
    if ((chunks[0] as Buffer).length < 4) chunks = [Buffer.concat(chunks)];
    const length = (chunks[0] as Buffer).readUInt32BE(0);
    if (buffered < 4 + length) break;
    const joined = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    record(JSON.parse(joined.subarray(4, 4 + length).toString('utf8')) as Record<string, unknown>, length);
    const rest = joined.subarray(4 + length);
    chunks = rest.length > 0 ? [rest] : [];
    buffered = rest.length;
  }
  onReceived();
});

function record(frame: Record<string, unknown>, bytes: number): void {
  if (frame.type === 'execute') programId = String(frame.programId);
  if (frame.type !== 'tool_results') {
    received.push({ type: String(frame.type), bytes });
    return;
  }
  const results = (frame.results as Record<string, unknown>[]).map((result) => ({
    callId: String(result.callId),
    ok: result.ok === true,
    ...(typeof result.error === 'string' ? { error: result.error.slice(0, 500) } : {}),
    ...(result.ok === true ? { valueBytes: Buffer.byteLength(JSON.stringify(result.value ?? null)) } : {}),
  }));
  received.push({ type: 'tool_results', bytes, results });
}

function count(type: string, unit: 'frames' | 'results'): number {
  let total = 0;
  for (const frame of received) {
    if (frame.type === type) total += unit === 'results' ? (frame.results?.length ?? 0) : 1;
  }
  return total;
}

async function awaitFrames(type: string, wanted: number, unit: 'frames' | 'results'): Promise<void> {
  while (count(type, unit) < wanted) {
    await new Promise<void>((resolve) => {
      onReceived = resolve;
    });
  }
}

/** The template directives, read without narrowing the union. */
interface Directive {
  readonly $repeat?: string;
  readonly times?: number;
  readonly $many?: number;
  readonly each?: HostileTemplate;
  readonly $nest?: number;
  readonly inner?: HostileTemplate;
}

/** Renders a template as JSON text, so nesting a million levels deep costs no recursion. */
function render(template: HostileTemplate, index: number): string {
  if (typeof template === 'string') {
    if (template === '$programId') return JSON.stringify(programId);
    if (template === '$index') return JSON.stringify(String(index));
    if (template === '$received') return JSON.stringify(received);
    return JSON.stringify(template);
  }
  if (Array.isArray(template)) return `[${template.map((item) => render(item, index)).join(',')}]`;
  if (template === null || typeof template !== 'object') return JSON.stringify(template);
  const directive = template as Directive;
  if (typeof directive.$repeat === 'string')
    return JSON.stringify(directive.$repeat.repeat(directive.times ?? 1));
  if (typeof directive.$many === 'number') {
    const items: string[] = [];
    for (let at = 0; at < directive.$many; at += 1) items.push(render(directive.each ?? null, at));
    return `[${items.join(',')}]`;
  }
  if (typeof directive.$nest === 'number') {
    const inner = directive.inner === undefined ? '' : render(directive.inner, index);
    return `${'['.repeat(directive.$nest)}${inner}${']'.repeat(directive.$nest)}`;
  }
  const fields = Object.entries(template).map(
    ([key, value]) => `${JSON.stringify(key)}:${render(value, index)}`,
  );
  return `{${fields.join(',')}}`;
}

function frameOf(body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([header, bytes]);
}

/** Writes as a flooding host would: as fast as the parent reads, never slower. */
async function write(bytes: Buffer, times = 1): Promise<void> {
  for (let sent = 0; sent < times; sent += 1) {
    if (!socket.write(bytes)) await once(socket, 'drain');
  }
}

for (const step of steps) {
  if ('send' in step) await write(frameOf(render(step.send, 0)), step.times);
  else if ('sendBody' in step) await write(frameOf(step.sendBody), step.times);
  else if ('sendHeader' in step) {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(step.sendHeader, 0);
    await write(header);
  } else if ('await' in step) {
    await awaitFrames(step.await, step.results ?? step.frames ?? 1, step.results ? 'results' : 'frames');
  } else if ('stopReading' in step) socket.pause();
  else if ('exit' in step) process.exit(step.exit);
}
// Then nothing: the host stays alive, as a compromised one would, until it is killed.
setInterval(() => {}, 60_000);
