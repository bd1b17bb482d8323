/**
 * A first-come, first-served shared/exclusive lock. Ordinary tool calls share it; an exclusive
 * tool takes it alone. A waiting exclusive call holds back later shared calls, so it cannot be
 * starved and calls start in the order they were made.
 */
export class ToolLock {
  #sharedHolders = 0;
  #isExclusivelyHeld = false;
  readonly #waiters: { isExclusive: boolean; grant: () => void }[] = [];

  /** Takes the lock now if nobody holds it back, returning the function that releases it. */
  tryAcquire(isExclusive: boolean): (() => void) | undefined {
    if (this.#waiters.length > 0 || !this.#canGrant(isExclusive)) return undefined;
    this.#take(isExclusive);
    return this.#releaser(isExclusive);
  }

  /** Waits for the lock and returns the function that releases it. */
  async acquire(isExclusive: boolean): Promise<() => void> {
    const release = this.tryAcquire(isExclusive);
    if (release) return release;
    await new Promise<void>((grant) => this.#waiters.push({ isExclusive, grant }));
    return this.#releaser(isExclusive);
  }

  #releaser(isExclusive: boolean): () => void {
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      if (isExclusive) this.#isExclusivelyHeld = false;
      else this.#sharedHolders -= 1;
      this.#grantWaiters();
    };
  }

  #canGrant(isExclusive: boolean): boolean {
    if (this.#isExclusivelyHeld) return false;
    return isExclusive ? this.#sharedHolders === 0 : true;
  }

  #take(isExclusive: boolean): void {
    if (isExclusive) this.#isExclusivelyHeld = true;
    else this.#sharedHolders += 1;
  }

  #grantWaiters(): void {
    for (let next = this.#waiters[0]; next && this.#canGrant(next.isExclusive); next = this.#waiters[0]) {
      this.#waiters.shift();
      this.#take(next.isExclusive);
      next.grant();
    }
  }
}
