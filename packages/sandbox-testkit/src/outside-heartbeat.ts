/** How often the heartbeat ticks, in milliseconds. */
const tickMilliseconds = 20;

/**
 * Measures how late the outside machine's event loop runs while a case attacks the sandbox: a fork bomb or a
 * memory bomb that escaped its limits would starve the test process, and its timers would fire late.
 */
export class OutsideHeartbeat {
  #timer: NodeJS.Timeout | undefined;
  #expectedAt = 0;
  #longestLagMilliseconds = 0;

  start(): void {
    this.#expectedAt = performance.now() + tickMilliseconds;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#longestLagMilliseconds = Math.max(this.#longestLagMilliseconds, now - this.#expectedAt);
      this.#expectedAt = now + tickMilliseconds;
    }, tickMilliseconds);
  }

  /** Stops the heartbeat and returns the longest delay of a tick, in milliseconds. */
  stop(): number {
    clearInterval(this.#timer);
    this.#timer = undefined;
    return this.#longestLagMilliseconds;
  }
}

/** How late a fresh timer outside the sandbox fires, in milliseconds: the outside machine still answers now. */
export async function timerLateness(delayMilliseconds = 50): Promise<number> {
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, delayMilliseconds));
  return performance.now() - start - delayMilliseconds;
}
