import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { type PostgresDatabase, runOn, storeFailure } from './postgres-database.js';

/** The advisory-lock space (first key) of presence locks: 'GHSP'. */
export const presenceLockSpace = 0x47485350;

/** The channel a release is announced on; the payload is `<schema>\n<session id>`. */
export const releaseChannel = 'ghost_session_released';

/**
 * One dedicated connection per store, which shows that the store's process is alive and hears
 * releases. It holds a session-level advisory lock on (`presenceLockSpace`, `key`), recorded in every
 * lease the store takes: when the process dies, the server closes the connection and frees the lock,
 * so another store may take those leases at once instead of waiting for them to expire. It also
 * LISTENs on {@link releaseChannel} and wakes the store's waiters.
 */
export class StorePresence {
  /** This store's presence key, recorded in its leases; a new one for each connection. */
  key = 0;
  readonly #database: PostgresDatabase;
  readonly #onRelease: (payload: string) => void;
  readonly #onConnected: (key: number) => Promise<void>;
  #client: pg.PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #isClosed = false;

  /**
   * `onRelease` hears each release announced; `onConnected` runs after each (re)connection, with the
   * new key, so the store can move the leases its runs still hold to it.
   */
  constructor(
    database: PostgresDatabase,
    handlers: {
      readonly onRelease: (payload: string) => void;
      readonly onConnected: (key: number) => Promise<void>;
    },
  ) {
    this.#database = database;
    this.#onRelease = handlers.onRelease;
    this.#onConnected = handlers.onConnected;
  }

  /** Whether the connection is up (leases taken now are backed by it). */
  get isUp(): boolean {
    return this.#client !== undefined;
  }

  /** Connects, unless connected; rejects with a `SessionStoreError` when the server cannot be reached. */
  ensure(): Promise<void> {
    if (this.#isClosed || this.#client !== undefined) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    const client = await this.#database.connect('opening its presence connection');
    const drop = (error?: unknown) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.release(error instanceof Error ? error : true);
    };
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (notification) => {
      if (notification.channel === releaseChannel && notification.payload !== undefined) {
        this.#onRelease(notification.payload);
      }
    });
    try {
      // A new key for each connection: leases recorded under the last one (a release that failed
      // while the server was away) now show a dead holder, and are free to take. Another process
      // may hold the same random key: then choose another.
      for (let attempt = 0; ; attempt += 1) {
        this.key = randomInt(1, 2 ** 31 - 1);
        const taken = await runOn(client, 'SELECT pg_try_advisory_lock($1, $2) AS taken', [
          presenceLockSpace,
          this.key,
        ]);
        if (taken.rows[0]?.taken === 't') break;
        if (attempt >= 8) throw new Error('no free presence key after 8 tries');
      }
      await runOn(client, `LISTEN ${releaseChannel}`, []);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw storeFailure(error, 'opening its presence connection');
    }
    if (this.#isClosed) {
      client.release(true);
      return;
    }
    this.#client = client;
    // Renewals record the key too, so a failure here only delays the move.
    await this.#onConnected(this.key).catch(() => {});
  }

  /** Closes the connection (the server frees the lock and the LISTEN with it). */
  async close(): Promise<void> {
    this.#isClosed = true;
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    client?.release(true);
  }
}
