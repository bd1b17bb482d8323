import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameError } from './frame-codec.js';
import { ProtocolError, parseHostFrame } from './protocol.js';

describe('frames', () => {
  it('round-trips non-ASCII JSON split at every byte boundary', () => {
    const message = { type: 'output', programId: 'p1', text: 'Grüße 🎉 — ü' };
    const frame = encodeFrame(message);
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    for (let cut = 1; cut < frame.length; cut += 1) {
      const decoder = new FrameDecoder();
      expect([...decoder.push(frame.subarray(0, cut)), ...decoder.push(frame.subarray(cut))]).toEqual([
        message,
      ]);
      expect(decoder.bufferedBytes).toBe(0);
    }
  });

  it('decodes many frames from one chunk, keeping a partial one for later', () => {
    const decoder = new FrameDecoder();
    const frames = Buffer.concat([
      encodeFrame({ n: 1 }),
      encodeFrame({ n: 2 }),
      encodeFrame({ n: 3 }).subarray(0, 5),
    ]);
    expect(decoder.push(frames)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(decoder.bufferedBytes).toBe(5);
  });

  it('rejects a frame declared over the cap before receiving its body', () => {
    const decoder = new FrameDecoder(1024);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(64 * 1024 * 1024 + 1, 0);
    expect(() => decoder.push(header)).toThrow(FrameError);
    expect(() => encodeFrame({ text: 'x'.repeat(2000) }, 1024)).toThrow(/over the 1024-byte limit/);
  });

  it('rejects bodies that are not JSON objects', () => {
    const body = Buffer.from('[1,2]');
    const frame = Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]);
    expect(() => new FrameDecoder().push(frame)).toThrow('A frame must hold a JSON object.');
    const broken = Buffer.from('{"a":');
    expect(() =>
      new FrameDecoder().push(Buffer.concat([Buffer.from([0, 0, 0, broken.length]), broken])),
    ).toThrow(/not valid JSON/);
  });

  it('reports the size of each frame it decodes', () => {
    const frames = new FrameDecoder().pushFrames(
      Buffer.concat([encodeFrame({ n: 1 }), encodeFrame({ text: 'ü' })]),
    );
    expect(frames).toEqual([
      { message: { n: 1 }, bytes: 7 },
      { message: { text: 'ü' }, bytes: 13 },
    ]);
  });

  it('turns a parser failure of any kind into a FrameError', () => {
    const body = Buffer.from(`${'['.repeat(100)}`);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]);
    expect(() => new FrameDecoder().push(frame)).toThrow(FrameError);
  });

  it('refuses host frames with ids that are not short strings, counts that are not counts, or deep nesting', () => {
    const output = { type: 'output', programId: 'p1', text: 'x' };
    expect(() => parseHostFrame({ ...output, programId: 'p'.repeat(129) })).toThrow(
      /programId must be a string of 1 to 128 characters, not the string "p{40}"… \(129 characters\)/,
    );
    expect(() => parseHostFrame({ ...output, skippedBytes: 1.5 })).toThrow(/skippedBytes/);
    expect(() =>
      parseHostFrame({ type: 'tool_calls', programId: 'p1', calls: [{ callId: 5, name: 'x', input: {} }] }),
    ).toThrow(/callId must be a string of 1 to 128 characters, not 5/);
    let deep: unknown = 1;
    for (let level = 0; level < 260; level += 1) deep = [deep];
    expect(() => parseHostFrame({ ...output, extra: deep })).toThrow(/nests deeper than values may/);
    expect(() => parseHostFrame({ type: { toString: 'x' } })).toThrow(
      /Unknown host frame type: an object with the keys "toString"/,
    );
  });

  it('accepts only the host frames the protocol defines', () => {
    expect(parseHostFrame({ type: 'hello', protocol: 1, engine: 'quickjs' })).toMatchObject({
      type: 'hello',
    });
    expect(() => parseHostFrame({ type: 'shell', command: 'rm' })).toThrow(ProtocolError);
    expect(() => parseHostFrame({ type: 'tool_calls', programId: 'p1', calls: [{ name: 'x' }] })).toThrow(
      /callId/,
    );
    expect(() => parseHostFrame({ type: 'done', programId: 'p1', status: 'finished' })).toThrow(/status/);
  });
});
