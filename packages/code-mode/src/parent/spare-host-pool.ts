import { CleanupError } from '@ghost/core/plugin';
import { errorMessage } from '../shared/error-message.js';
import { failedHostLink, type HostLauncher, type HostLink } from './host-link.js';

/** How many spare hosts one pool keeps at most unless `spareHosts` says otherwise. */
export const defaultSpareHosts = 2;

/**
 * How long a pool remembers a session's demand (its opening, a program starting). Spares beyond
 * the sessions active in this window retire, so a runtime whose sessions sit idle holds no spare.
 */
const spareIdleMs = 30_000;

/** What one session sees of its pool. */
export interface SpareHosts {
  /**
   * A spare host that is alive (ready, or still starting), taken out of the pool: from now on it
   * belongs to the caller alone and never goes back. `undefined` when none is there.
   */
  take(): HostLink | undefined;
  /** Starts spares up to the pool's recent demand (called once a program is over). */
  refill(): void;
  /**
   * Whether the session holds a host of its own for its next program (`placement: 'session'`
   * keeps the host a completed program leaves): while it does, the pool keeps no spare for it.
   */
  holdHost(holds: boolean): void;
  /**
   * The session is closed: it takes no more, and the pool keeps no spare for it. When it was the
   * pool's last session, the pooled spares close, and the promise settles once they are gone.
   */
  leave(): Promise<void>;
}

interface PooledSpare {
  readonly link: HostLink;
  isReady: boolean;
}

/** A session in the pool: when it last opened or started a program. */
interface Member {
  lastDemand: number;
  /** The session holds a host of its own for its next program, so it needs no spare. */
  holdsHost: boolean;
}

/**
 * Spare hosts shared by the sessions that would start the very same host (same engine, command,
 * sandbox policy, limits, placement and tools): a session takes one when a program starts and the
 * host is then its own. The pool keeps one spare for each session that opened or started a program
 * in the last {@link spareIdleMs} (a session runs one program at a time, so one spare each is all
 * it can use), at most `cap`, and none at all while no session is open. A spare that dies while pooled is dropped,
 * and replaced when it had got ready (one that fails to start is not retried in a loop: the next
 * program launches its own host and reports why it failed).
 */
export class SpareHostPool {
  readonly #launch: HostLauncher;
  readonly #cap: number;
  readonly #idleMs: number;
  readonly #spares: PooledSpare[] = [];
  readonly #members = new Set<Member>();
  readonly #cleanups = new Set<Promise<void>>();
  #retireTimer: ReturnType<typeof setTimeout> | undefined;
  #isClosed = false;

  constructor(options: { launch: HostLauncher; cap: number; idleMs?: number }) {
    this.#launch = options.launch;
    this.#cap = options.cap;
    this.#idleMs = options.idleMs ?? spareIdleMs;
  }

  /** How many spares are pooled now (started or starting). */
  get size(): number {
    return this.#spares.length;
  }

  /** Adds a session: it counts as demand, and a spare starts if the pool has none for it. */
  join(): SpareHosts {
    const member: Member = { lastDemand: 0, holdsHost: false };
    this.#members.add(member);
    this.#recordDemand(member);
    this.#refill();
    let hasLeft = false;
    return {
      take: () => (hasLeft ? undefined : this.#take(member)),
      refill: () => {
        if (!hasLeft) this.#refill();
      },
      holdHost: (holds) => {
        if (hasLeft) return;
        member.holdsHost = holds;
        if (holds) this.#retire(this.#target());
      },
      leave: async () => {
        if (hasLeft) return;
        hasLeft = true;
        this.#members.delete(member);
        if (this.#members.size === 0) await Promise.all(this.#retire(0));
      },
    };
  }

  /** Closes every pooled spare; rejects with a `CleanupError` when one could not be released. */
  async close(): Promise<void> {
    this.#isClosed = true;
    this.#retire(0);
    const settled = await Promise.allSettled([...this.#cleanups]);
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) {
      const reason = (failure as PromiseRejectedResult).reason as Error;
      throw CleanupError.isInstance(reason)
        ? reason
        : new CleanupError(`Code mode could not release a spare engine host: ${reason.message}`, {
            cause: reason,
          });
    }
  }

  #take(member: Member): HostLink | undefined {
    this.#recordDemand(member);
    // A ready spare first; else one still starting, which is further along than a new launch.
    const index = this.#spares.findIndex((spare) => spare.isReady);
    const spare = this.#spares.splice(index === -1 ? 0 : index, 1)[0];
    return spare?.link;
  }

  /**
   * How many spares recent demand asks for: one per session active in the window that holds no
   * host of its own, at most `cap`.
   */
  #target(): number {
    if (this.#isClosed) return 0;
    const since = Date.now() - this.#idleMs;
    let active = 0;
    for (const member of this.#members) {
      if (member.lastDemand > since && !member.holdsHost) active += 1;
      if (active >= this.#cap) break;
    }
    return Math.min(this.#cap, active);
  }

  /** Notes a session's demand; once no session has shown any for the idle time, spares retire. */
  #recordDemand(member: Member): void {
    member.lastDemand = Date.now();
    clearTimeout(this.#retireTimer);
    if (this.#isClosed) return;
    this.#retireTimer = setTimeout(() => this.#retire(this.#target()), this.#idleMs + 1);
    // Retiring is housekeeping; it must not keep the process alive.
    this.#retireTimer.unref();
  }

  /** Retires spares beyond the target, or starts them up to it. */
  #refill(): void {
    const target = this.#target();
    this.#retire(target);
    while (this.#spares.length < target) this.#spares.push(this.#watch(this.#startSpare()));
  }

  #startSpare(): HostLink {
    try {
      return this.#launch('spare');
    } catch (error) {
      return failedHostLink(`The engine host could not be launched: ${errorMessage(error)}`);
    }
  }

  #watch(link: HostLink): PooledSpare {
    const spare: PooledSpare = { link, isReady: false };
    link.ready.then(
      () => {
        spare.isReady = true;
      },
      () => {},
    );
    // Removed as soon as it is lost, so a dead spare is never handed out.
    void link.lost.then(() => {
      const index = this.#spares.indexOf(spare);
      if (index === -1) return; // handed out: its session watches it now
      this.#spares.splice(index, 1);
      this.#track(link.close());
      if (spare.isReady) this.#refill();
    });
    return spare;
  }

  /** Closes spares until no more than `target` remain, the newest first; returns their closings. */
  #retire(target: number): Promise<void>[] {
    if (target === 0) {
      clearTimeout(this.#retireTimer);
      this.#retireTimer = undefined;
    }
    const closings: Promise<void>[] = [];
    while (this.#spares.length > target) {
      const spare = this.#spares.pop();
      if (spare) closings.push(this.#track(spare.link.close()));
    }
    return closings;
  }

  #track(cleanup: Promise<void>): Promise<void> {
    this.#cleanups.add(cleanup);
    cleanup.then(
      () => this.#cleanups.delete(cleanup),
      () => {}, // a failed cleanup stays, so close() reports it
    );
    return cleanup;
  }
}

/**
 * The spare-host pools of one runtime, one per kind of host (see {@link SpareHostPool}), kept with
 * `runtime.resource()` and closed by `runtime.close()`.
 */
export class SpareHostPools {
  readonly #pools = new Map<string, SpareHostPool>();
  #isClosed = false;

  /** The pool for hosts described by `key`, made with `launch` and `cap` the first time. */
  pool(key: string, launch: HostLauncher, cap: number): SpareHostPool {
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      pool = new SpareHostPool({ launch, cap });
      // A pool made after close() never starts a spare: it is closed at once.
      if (this.#isClosed) void pool.close().catch(() => {});
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pool's spares; rejects with the first `CleanupError`. */
  async close(): Promise<void> {
    this.#isClosed = true;
    const settled = await Promise.allSettled([...this.#pools.values()].map((pool) => pool.close()));
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }
}
