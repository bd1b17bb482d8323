import { ConfigurationError, type JsonObject } from '@ghost/core';
import {
  type OpenedSessionV1,
  planSessionWrite,
  type RenewingSessionLease,
  renewSessionLease,
  SessionAccessError,
  SessionBusyError,
  SessionConflictError,
  type SessionLimits,
  type SessionRecord,
  SessionStoreError,
  type SessionWrite,
  type SessionWriteResult,
} from '@ghost/core/session-store';
import { type PostgresDatabase, type Statements, storeName } from './postgres-database.js';
import type { GhostTables } from './postgres-migrations.js';
import type { SessionLeases } from './session-leases.js';
import { corruptSession, readCount, readRecord } from './session-rows.js';

/** The session's row as `open` read it. */
export interface OpenedSessionRow {
  /** The row's number (its key in the other tables); `undefined` for a session not written yet. */
  readonly sequence: string | undefined;
  readonly state: JsonObject;
  readonly messageCount: number;
  readonly byteCount: number;
  /** The paused run the row keeps, if any. */
  readonly pause: string | undefined;
}

/** What an opened session needs from its store. */
export interface OpenedSessionContext {
  readonly database: PostgresDatabase;
  readonly tables: GhostTables;
  readonly leases: SessionLeases;
  readonly limits: SessionLimits;
  readonly isStoreClosed: () => boolean;
  /** Called once, when the session is released. */
  readonly onRelease: (session: OpenedPostgresSession) => void;
}

// PostgreSQL text cannot hold NUL, and UTF-8 cannot hold a lone surrogate: neither could be kept
// verbatim. Ghost's own messages are JSON text, which escapes both.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function refuseUnstorable(
  value: string,
  what: string,
  code: 'SESSION_MESSAGE_INVALID' | 'SESSION_OPTION_INVALID',
) {
  if (value.includes('\u0000') || loneSurrogate.test(value)) {
    throw new ConfigurationError(
      `${what} holds a NUL character or a lone surrogate, which PostgreSQL text cannot keep verbatim. Nothing was written; write messages encoded by Ghost (JSON text escapes both), and operation ids without them.`,
      { code, option: what },
    );
  }
}

/**
 * A session held by one run: reads its history window by the primary key, and writes in one
 * transaction that first checks (and extends) this run's lease.
 */
export class OpenedPostgresSession implements OpenedSessionV1 {
  readonly id: string;
  readonly actor: string;
  readonly isNew: boolean;
  readonly state: JsonObject;
  /** This hold's token in the lease row. */
  readonly holder: string;
  #sequence: string | undefined;
  #messageCount: number;
  #byteCount: number;
  #pause: string | undefined;
  #isReleased = false;
  #releasing: Promise<void> | undefined;
  readonly #context: OpenedSessionContext;
  readonly #renewal: RenewingSessionLease;

  constructor(
    context: OpenedSessionContext,
    request: { readonly id: string; readonly actor: string; readonly holder: string },
    row: OpenedSessionRow,
  ) {
    this.#context = context;
    this.id = request.id;
    this.actor = request.actor;
    this.holder = request.holder;
    this.isNew = row.sequence === undefined;
    this.state = row.state;
    this.#sequence = row.sequence;
    this.#messageCount = row.messageCount;
    this.#byteCount = row.byteCount;
    this.#pause = row.pause;
    const { leases } = context;
    this.#renewal = renewSessionLease({
      renew: () => leases.renew(this.id, this.holder),
      intervalMs: Math.max(50, Math.floor(leases.leaseMs / 3)),
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

  #requireHeld(): void {
    if (this.#context.isStoreClosed()) {
      throw new SessionStoreError(
        `Session store '${storeName}' is closed; create a new one with postgresSessionStore().`,
        { store: storeName, reason: 'closed', sessionId: this.id },
      );
    }
    if (this.#isReleased) {
      throw new SessionBusyError(
        `This run no longer holds session '${this.id}' of store '${storeName}' (it was released), so nothing was written.`,
        { store: storeName, sessionId: this.id, reason: 'lock-lost' },
      );
    }
  }

  async history(request: {
    readonly limit: number;
    readonly before?: number;
  }): Promise<readonly SessionRecord[]> {
    this.#requireHeld();
    const end = Math.min(request.before ?? this.#messageCount, this.#messageCount);
    const count = Math.min(request.limit, end);
    if (this.#sequence === undefined || count <= 0) return [];
    const { rows } = await this.#context.database.run(
      `SELECT position, message, operation_id, outcome,
              (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
       FROM ${this.#context.tables.messages}
       WHERE session_sequence = $1 AND position >= $2 AND position < $3
       ORDER BY position`,
      // Positions are contiguous, so both bounds are known: the planner reads the window's rows
      // whatever its statistics say (with only an upper bound and statistics from before the
      // session grew, it read all 10,000 rows of a session and sorted them).
      [this.#sequence, end - count, end],
      'reading the history',
      this.id,
    );
    const records = rows.map((row) => readRecord(row, this.id));
    // Positions are contiguous from 0: the window is exactly [end - count, end).
    for (const [index, record] of records.entries()) {
      if (record.position !== end - count + index) {
        throw corruptSession(
          this.id,
          `its history has ${this.#messageCount} messages, but position ${end - count + index} is missing`,
        );
      }
    }
    if (records.length !== count) {
      throw corruptSession(this.id, `its history has ${this.#messageCount} messages, but fewer rows`);
    }
    return records;
  }

  async write(write: SessionWrite): Promise<SessionWriteResult> {
    this.#requireHeld();
    refuseUnstorable(write.operationId, 'operationId', 'SESSION_OPTION_INVALID');
    for (const [index, message] of write.messages.entries()) {
      refuseUnstorable(message, `Message ${index + 1}`, 'SESSION_MESSAGE_INVALID');
    }
    for (const [index, message] of (write.replaceFrom?.expected ?? []).entries()) {
      refuseUnstorable(message, `Expected message ${index + 1}`, 'SESSION_MESSAGE_INVALID');
    }
    if (typeof write.pause === 'string')
      refuseUnstorable(write.pause, 'The paused run', 'SESSION_MESSAGE_INVALID');
    const result = await this.#context.database.transaction('writing to the session', this.id, (statements) =>
      this.#apply(statements, write),
    );
    this.#messageCount = result.messageCount;
    this.#byteCount = result.byteCount;
    // No one else writes under the lease: the stored pause is this handle's, as this write left it.
    if (result.status === 'applied' && write.pause !== undefined) this.#pause = write.pause ?? undefined;
    return result;
  }

  async #apply(statements: Statements, write: SessionWrite): Promise<SessionWriteResult> {
    const { tables, leases, limits } = this.#context;
    if (!(await leases.fence(statements, this.id, this.holder))) {
      throw new SessionBusyError(
        `This run no longer holds session '${this.id}' of store '${storeName}': its lease expired and another run took the session. Nothing was written; run again.`,
        { store: storeName, sessionId: this.id, reason: 'lock-lost' },
      );
    }
    const found = await statements.run(
      `SELECT sequence, actor, message_count, byte_count FROM ${tables.sessions} WHERE id = $1 FOR UPDATE`,
      [this.id],
    );
    const row = found.rows[0];
    if (row !== undefined && row.actor !== this.actor) throw new SessionAccessError();
    if (row?.sequence !== this.#sequence && this.#sequence !== undefined) {
      throw new SessionBusyError(
        `Session '${this.id}' of store '${storeName}' was deleted while this run held it. Nothing was written.`,
        { store: storeName, sessionId: this.id, reason: 'lock-lost' },
      );
    }
    const sequence = row?.sequence ?? undefined;
    const current = {
      messageCount: row === undefined ? 0 : readCount(row.message_count, 'message count', this.id),
      byteCount: row === undefined ? 0 : readCount(row.byte_count, 'byte count', this.id),
    };
    if (sequence !== undefined) {
      const applied = await statements.run(
        `SELECT digest FROM ${tables.operations} WHERE session_sequence = $1 AND operation_id = $2`,
        [sequence, write.operationId],
      );
      const digest = applied.rows[0]?.digest;
      if (digest !== undefined) {
        if (digest !== write.digest) {
          throw new SessionConflictError(
            `Operation '${write.operationId}' was already applied to this session with other content, so this write was refused. Give each distinct write its own operation id.`,
            { reason: 'operation-reused', operationId: write.operationId, sessionId: this.id },
          );
        }
        return { status: 'already-applied', ...current };
      }
    }
    const from = write.replaceFrom?.position ?? current.messageCount;
    const removed = await this.#removedTail(statements, sequence, current.messageCount, write);
    const plan = planSessionWrite(
      limits,
      current,
      {
        removedCount: current.messageCount - from,
        removedBytes: removed,
        messages: write.messages,
        state: write.state,
        pause: write.pause,
      },
      this.id,
    );
    let key = sequence;
    if (key === undefined) {
      const created = await statements.run(
        `INSERT INTO ${tables.sessions} (id, actor, state, message_count, byte_count, pause)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING sequence`,
        [this.id, this.actor, plan.stateText ?? '{}', plan.messageCount, plan.byteCount, write.pause ?? null],
      );
      key = created.rows[0]?.sequence ?? undefined;
      if (key === undefined) throw corruptSession(this.id, 'its new row has no number');
    } else {
      await statements.run(
        `UPDATE ${tables.sessions}
         SET message_count = $2, byte_count = $3, state = coalesce($4, state),
             pause = CASE WHEN $5::boolean THEN $6::text ELSE pause END, updated_at = now()
         WHERE sequence = $1`,
        // $5: whether the write changes the paused run (absent leaves it; null removes it).
        [
          key,
          plan.messageCount,
          plan.byteCount,
          plan.stateText ?? null,
          write.pause !== undefined,
          write.pause ?? null,
        ],
      );
      if (from < current.messageCount) {
        await statements.run(
          `DELETE FROM ${tables.messages} WHERE session_sequence = $1 AND position >= $2`,
          [key, from],
        );
      }
    }
    if (write.messages.length > 0) {
      await statements.run(
        `INSERT INTO ${tables.messages} (session_sequence, position, message, bytes, operation_id, outcome)
         SELECT $1, $2::integer + added.ordinality::integer - 1, added.message, added.bytes, $3, $4
         FROM unnest($5::text[], $6::integer[]) WITH ORDINALITY AS added(message, bytes, ordinality)`,
        [key, from, write.operationId, write.outcome ?? null, write.messages, plan.messageBytes],
      );
    }
    await statements.run(
      `INSERT INTO ${tables.operations} (session_sequence, operation_id, digest) VALUES ($1, $2, $3)`,
      [key, write.operationId, write.digest],
    );
    this.#sequence = key;
    return { status: 'applied', messageCount: plan.messageCount, byteCount: plan.byteCount };
  }

  /**
   * For a write with `replaceFrom`: checks the stored tail is exactly the expected messages and
   * returns its bytes (else `SessionConflictError`, `reason: 'tail-moved'`). 0 for other writes.
   */
  async #removedTail(
    statements: Statements,
    sequence: string | undefined,
    messageCount: number,
    write: SessionWrite,
  ): Promise<number> {
    const replace = write.replaceFrom;
    if (replace === undefined) return 0;
    const tailMoved = () =>
      new SessionConflictError(
        'The messages replace() expected at the end of the history are no longer there, so nothing was changed. Read the history again and retry.',
        { reason: 'tail-moved', operationId: write.operationId, sessionId: this.id },
      );
    const { position, expected } = replace;
    if (!Number.isSafeInteger(position) || position < 0 || position + expected.length !== messageCount) {
      throw tailMoved();
    }
    if (expected.length === 0 || sequence === undefined) return 0;
    const { rows } = await statements.run(
      `SELECT position, message, bytes FROM ${this.#context.tables.messages}
       WHERE session_sequence = $1 AND position >= $2 ORDER BY position`,
      [sequence, position],
    );
    if (rows.length !== expected.length) {
      throw corruptSession(this.id, `it counts ${messageCount} messages but holds ${position + rows.length}`);
    }
    let bytes = 0;
    for (const [index, stored] of rows.entries()) {
      if (stored.message !== expected[index]) throw tailMoved();
      bytes += readCount(stored.bytes, 'message size', this.id);
    }
    return bytes;
  }

  /**
   * Gives the session up. A release that cannot reach the server does not fail: the lease then
   * ends by itself (at once when this process's presence connection is gone too, else when it
   * expires).
   */
  release(): Promise<void> {
    this.#releasing ??= this.#release();
    return this.#releasing;
  }

  async #release(): Promise<void> {
    this.#isReleased = true;
    this.#renewal.stop();
    this.#context.onRelease(this);
    try {
      await this.#context.leases.release(this.id, this.holder);
    } catch {
      // the lease ends by itself, as above
    }
  }
}
