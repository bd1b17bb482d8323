import { describe, expect, it } from 'vitest';
import { createVmDriver } from '../test-support/vm-driver.js';
import { rehearseProgram } from './host-rehearsal.js';

describe('rehearseProgram', () => {
  it('runs one small program with one tool call, in a guest of its own', async () => {
    const driver = createVmDriver();
    expect(await rehearseProgram(driver)).toBe(1);
    expect(driver.prepared).toBe(1);
  });

  it('warms up with the calls asked for before its usual one', async () => {
    expect(await rehearseProgram(createVmDriver(), { warmUpCalls: 50 })).toBe(51);
  });

  it('ends the warm-up at the call where it is asked to hurry, and still completes the program', async () => {
    let checks = 0;
    const answered = await rehearseProgram(createVmDriver(), {
      warmUpCalls: 600,
      shouldHurry: () => {
        checks += 1;
        return checks > 10;
      },
    });
    // Ten answered 1, the eleventh 0 (the loop ends), then the usual call.
    expect(answered).toBe(12);
  });

  it('makes only its usual call when hurried before it starts', async () => {
    expect(await rehearseProgram(createVmDriver(), { warmUpCalls: 600, shouldHurry: () => true })).toBe(2);
  });

  it("runs a driver's own rehearsal program as it is, without a warm-up", async () => {
    const driver = { ...createVmDriver(), rehearsalSource: 'await tools.warm({}); 1' };
    expect(await rehearseProgram(driver, { warmUpCalls: 600 })).toBe(1);
  });
});
