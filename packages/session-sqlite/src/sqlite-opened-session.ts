import { ConfigurationError, type JsonObject } from '@ghost/core';
import {
  type OpenedSessionV1,
  type RenewingSessionLease,
  renewSessionLease,
  SessionBusyError,
  type SessionRecord,
  type SessionWrite,
  type SessionWriteResult,
} from '@ghost/core/session-store';
import { applySessionWrite, type SessionWriter } from './apply-session-write.js';
import { dropLease, renewLease } from './session-lease.js';
import { historyQuery } from './session-queries.js';
import { corruptRow, readMessageRow, type SessionRow } from './session-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** What {@link SqliteOpenedSession} needs from its store. */
export interface SqliteOpenedSessionInit {
  readonly connection: SqliteConnection;
  readonly writer: SessionWriter;
  /** The session's row when opened; `undefined` for a session not written yet. */
  readonly row: SessionRow | undefined;
  readonly state: JsonObject;
  /** The paused run the row kept when opened. */
  readonly pause: string | undefined;
  /** Throws when the store is closed. */
  readonly throwIfStoreClosed: () => void;
  /** Called once, when the session is released. */
  readonly onRelease: (session: SqliteOpenedSession) => void;
}

/** A session opened by `sqliteSessionStore`: held by a lease this object renews until release. */
export class SqliteOpenedSession implements OpenedSessionV1 {
  readonly id: string;
  readonly actor: string;
  readonly isNew: boolean;
  readonly state: JsonObject;
  readonly #init: SqliteOpenedSessionInit;
  readonly #lease: RenewingSessionLease;
  #sequence: number | undefined;
  #messageCount: number;
  #byteCount: number;
  #pause: string | undefined;
  #isReleased = false;

  constructor(init: SqliteOpenedSessionInit) {
    const { writer, row, connection } = init;
    this.id = writer.sessionId;
    this.actor = writer.actor;
    this.isNew = row === undefined;
    this.state = init.state;
    this.#init = init;
    this.#sequence = row?.sequence;
    this.#messageCount = row?.messageCount ?? 0;
    this.#byteCount = row?.byteCount ?? 0;
    this.#pause = init.pause;
    this.#lease = renewSessionLease({
      renew: () =>
        connection.write((transaction) =>
          renewLease(transaction, writer.sessionId, writer.owner, Date.now() + writer.leaseMs),
        ),
      intervalMs: Math.max(1, Math.floor(writer.leaseMs / 3)),
    });
  }

  get messageCount(): number {
    return this.#messageCount;
  }

  get byteCount(): number {
    return this.#byteCount;
  }

  get pause(): string | undefined {
    return this.#pause;
  }

  async history(request: {
    readonly limit: number;
    readonly before?: number;
  }): Promise<readonly SessionRecord[]> {
    this.#requireLease();
    const { limit, before } = request;
    if (
      !Number.isSafeInteger(limit) ||
      limit < 0 ||
      (before !== undefined && (!Number.isSafeInteger(before) || before < 0))
    ) {
      throw new ConfigurationError(
        'history() takes a limit and a before position that are whole numbers, 0 or more.',
        {
          code: 'SESSION_OPTION_INVALID',
          option: 'history',
        },
      );
    }
    const end = Math.min(before ?? this.#messageCount, this.#messageCount);
    const sequence = this.#sequence;
    if (limit === 0 || end <= 0 || sequence === undefined) return [];
    const { rows } = await this.#init.connection.read((client) =>
      client.execute({
        sql: historyQuery,
        args: [sequence, end, limit],
      }),
    );
    const records = rows.map((row) => readMessageRow(row, this.id)).reverse();
    const first = Math.max(0, end - limit);
    if (
      records.length !== end - first ||
      records.some((record, index) => record.position !== first + index)
    ) {
      throw corruptRow(this.id, `messages between positions ${first} and ${end - 1} are missing`);
    }
    return records;
  }

  async write(write: SessionWrite): Promise<SessionWriteResult> {
    this.#requireLease();
    if (this.#lease.isLost) throw this.#lockLost();
    const applied = await this.#init.connection.write((transaction) =>
      applySessionWrite(transaction, this.#init.writer, write),
    );
    this.#sequence = applied.sequence;
    this.#messageCount = applied.messageCount;
    this.#byteCount = applied.byteCount;
    // No one else writes under the lease: the stored pause is this handle's, as this write left it.
    if (applied.status === 'applied' && write.pause !== undefined) this.#pause = write.pause ?? undefined;
    return { status: applied.status, messageCount: applied.messageCount, byteCount: applied.byteCount };
  }

  async release(): Promise<void> {
    if (this.#isReleased) return;
    this.#isReleased = true;
    this.#lease.stop();
    this.#init.onRelease(this);
    const { sessionId, owner } = this.#init.writer;
    await this.#init.connection.write((transaction) => dropLease(transaction, sessionId, owner));
  }

  #requireLease(): void {
    this.#init.throwIfStoreClosed();
    if (this.#isReleased) throw this.#lockLost();
  }

  #lockLost(): SessionBusyError {
    return new SessionBusyError(
      `This run no longer holds session '${this.id}' of store 'sqlite' (it was released, or its lease was taken over), so nothing was written.`,
      { store: 'sqlite', sessionId: this.id, reason: 'lock-lost' },
    );
  }
}
