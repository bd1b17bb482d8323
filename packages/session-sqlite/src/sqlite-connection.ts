import { mkdir, open, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GhostError } from '@ghost/core';
import { SessionStoreError } from '@ghost/core/session-store';
import { type Client, createClient, LibsqlError, type Transaction } from '@libsql/client';
import { type SerialQueue, shareFileQueue } from './serial-queue.js';
import { sqliteDatabaseUrl } from './sqlite-database-url.js';
import { migrateSqliteSchema } from './sqlite-schema.js';

/**
 * One store's way into its database file: a `@libsql/client` client with one connection, used by
 * one task at a time (this process's stores over the same file share the queue), in WAL mode with a
 * busy timeout, migrated before its first use.
 *
 * A client whose statement failed is replaced before the next task: a statement that failed with
 * `SQLITE_BUSY` stays in progress on its connection, and every later `COMMIT` there fails
 * (tursodatabase/libsql-client-ts#352), so a failed connection is never used again.
 */
export class SqliteConnection {
  readonly #path: string;
  readonly #url: string;
  readonly #busyTimeoutMs: number;
  #client: Client | undefined;
  #queue: SerialQueue | undefined;
  #unshare: (() => void) | undefined;
  #ready: Promise<SerialQueue> | undefined;
  #closing: Promise<void> | undefined;

  /** `path` is absolute; nothing is opened until the first task. */
  constructor(path: string, busyTimeoutMs: number) {
    this.#path = path;
    this.#url = sqliteDatabaseUrl(path);
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Runs `work` with the client, after every task queued before it. */
  read<Value>(work: (client: Client) => Promise<Value>): Promise<Value> {
    return this.#run(work);
  }

  /**
   * Runs `work` in a write transaction (`BEGIN IMMEDIATE`, waiting up to the busy timeout for
   * another process's) and commits it; rolls it back when `work` throws.
   */
  write<Value>(work: (transaction: Transaction) => Promise<Value>): Promise<Value> {
    return this.#run((client) => inWriteTransaction(client, work));
  }

  /** Closes the client after the tasks already queued. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const ready = this.#ready;
    if (ready === undefined) return;
    const queue = await ready.catch(() => undefined);
    if (queue !== undefined) await queue.run(async () => this.#dropClient());
    this.#unshare?.();
    this.#unshare = undefined;
  }

  async #run<Value>(work: (client: Client) => Promise<Value>): Promise<Value> {
    this.#throwIfClosed();
    const queue = await this.#whenReady();
    return queue.run(async () => {
      this.#throwIfClosed();
      try {
        return await work(this.#currentClient());
      } catch (error) {
        if (!GhostError.isInstance(error)) this.#dropClient();
        throw this.#failure(error);
      }
    });
  }

  #throwIfClosed(): void {
    if (this.#closing !== undefined) throw this.closedError();
  }

  /** The error of a call after `close()`. */
  closedError(): SessionStoreError {
    return new SessionStoreError(
      `Session store 'sqlite' (${this.#path}) is closed; create a new one with sqliteSessionStore().`,
      { store: 'sqlite', reason: 'closed' },
    );
  }

  #whenReady(): Promise<SerialQueue> {
    if (this.#ready === undefined) {
      const ready = this.#prepare();
      this.#ready = ready;
      // A failed start is tried again by the next task (the file may be free or fixed by then).
      ready.catch(() => {
        if (this.#ready === ready) this.#ready = undefined;
      });
    }
    return this.#ready;
  }

  async #prepare(): Promise<SerialQueue> {
    let file: string;
    try {
      await mkdir(dirname(this.#path), { recursive: true });
      // Created here, private to its owner: SQLite gives its -wal and -shm files the same mode.
      await (await open(this.#path, 'a', 0o600)).close();
      file = await realpath(this.#path);
    } catch (error) {
      throw this.#failure(error);
    }
    if (this.#queue === undefined) {
      const shared = shareFileQueue(file);
      this.#queue = shared.queue;
      this.#unshare = shared.unshare;
    }
    const queue = this.#queue;
    const startedAt = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        await queue.run(() => this.#migrate());
        return queue;
      } catch (error) {
        this.#dropClient();
        // Processes starting together on a new file can meet before its first write has made it a
        // WAL database; SQLite then answers SQLITE_BUSY at once, without waiting. Try again then.
        const isBusy =
          error instanceof LibsqlError && (error.code === 'SQLITE_BUSY' || error.code === 'SQLITE_LOCKED');
        if (!isBusy || Date.now() - startedAt >= Math.max(this.#busyTimeoutMs, 1_000))
          throw this.#failure(error);
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(100, 5 * attempt) * (0.5 + Math.random())),
        );
      }
    }
  }

  /** Puts the file in WAL mode and brings its schema up to date, in one write transaction. */
  async #migrate(): Promise<void> {
    const client = this.#currentClient();
    const mode = await client.execute('PRAGMA journal_mode = WAL');
    if (String(mode.rows[0]?.journal_mode).toLowerCase() !== 'wal') {
      throw new SessionStoreError(
        `Session store 'sqlite' could not put ${this.#path} in WAL mode (it stayed in '${String(mode.rows[0]?.journal_mode)}'): keep the file on a local file system.`,
        { store: 'sqlite', reason: 'unavailable' },
      );
    }
    await inWriteTransaction(client, (transaction) => migrateSqliteSchema(transaction, this.#path));
  }

  #currentClient(): Client {
    this.#client ??= createClient({
      url: this.#url,
      timeout: this.#busyTimeoutMs,
      // One connection: every task runs alone (the queue), and a failed one is replaced whole.
      concurrency: 1,
      intMode: 'number',
    });
    return this.#client;
  }

  #dropClient(): void {
    const client = this.#client;
    this.#client = undefined;
    client?.close();
  }

  /** A failure as a `SessionStoreError` naming the store, the file and what to do. */
  #failure(error: unknown): Error {
    if (GhostError.isInstance(error)) return error;
    const facts = { store: 'sqlite', cause: error };
    const where = `Session store 'sqlite' (${this.#path})`;
    const detail = error instanceof Error ? error.message : String(error);
    if (error instanceof LibsqlError) {
      switch (error.code) {
        case 'SQLITE_BUSY':
        case 'SQLITE_LOCKED':
          return new SessionStoreError(
            `${where} waited ${this.#busyTimeoutMs} ms (busyTimeoutMs) for another connection to the file to finish writing, and gave up: ${detail}. Nothing was written; try again, or raise busyTimeoutMs.`,
            { ...facts, reason: 'unavailable' },
          );
        case 'SQLITE_CORRUPT':
          return new SessionStoreError(
            `${where} found the database file damaged: ${detail}. Restore it from a backup, or move it aside and start a new one.`,
            { ...facts, reason: 'corrupt' },
          );
        case 'SQLITE_NOTADB':
          return new SessionStoreError(
            `${where} cannot use the file: it is not a SQLite database (${detail}). Point the store at a new file or at one it made.`,
            { ...facts, reason: 'schema' },
          );
        case 'CLIENT_CLOSED':
          return new SessionStoreError(`${where} is closed; create a new one with sqliteSessionStore().`, {
            ...facts,
            reason: 'closed',
          });
      }
    }
    if (error instanceof RangeError) {
      return new SessionStoreError(
        `${where} read a value it cannot represent (${detail}): a row was changed outside Ghost. Delete the session, or restore the file from a backup.`,
        { ...facts, reason: 'corrupt' },
      );
    }
    return new SessionStoreError(
      `${where} failed: ${detail}. Check that the file and its folder can be read and written; nothing was written half-way.`,
      { ...facts, reason: 'unavailable' },
    );
  }
}

async function inWriteTransaction<Value>(
  client: Client,
  work: (transaction: Transaction) => Promise<Value>,
): Promise<Value> {
  const transaction = await client.transaction('write');
  try {
    const value = await work(transaction);
    await transaction.commit();
    return value;
  } finally {
    transaction.close(); // rolls back unless committed
  }
}
