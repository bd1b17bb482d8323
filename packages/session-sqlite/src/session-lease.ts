import type { Transaction } from '@libsql/client';
import { currentLeaseHolder, isHolderGone, type LeaseHolder } from './lease-holder.js';

/** What runs a statement: a client, or a transaction. */
export type SqlExecutor = Pick<Transaction, 'execute'>;

/** A `ghost_session_leases` row: who holds a session, until when. */
export interface SessionLease extends LeaseHolder {
  /** A random token per open: the holder's proof in every write (fencing). */
  readonly owner: string;
  /** Milliseconds since the epoch, by the holder's clock (processes on one machine share it). */
  readonly expiresAt: number;
}

/**
 * Whether a lease still keeps others out: it has not expired and its holder is not known to have
 * ended (see `isHolderGone`: a holder on this machine whose process is gone ends its lease at once).
 */
export function isLeaseLive(lease: SessionLease, now: number): boolean {
  return lease.expiresAt > now && !isHolderGone(lease);
}

/** The lease of session `sessionId`, if any. A row that is not as written counts as expired. */
export async function readLease(executor: SqlExecutor, sessionId: string): Promise<SessionLease | undefined> {
  const { rows } = await executor.execute({
    sql: 'SELECT owner, pid, host, expires_at FROM ghost_session_leases WHERE session_id = ?',
    args: [sessionId],
  });
  const row = rows[0];
  if (row === undefined) return undefined;
  const { owner, pid, host, expires_at: expiresAt } = row;
  return {
    owner: typeof owner === 'string' ? owner : '',
    pid: typeof pid === 'number' ? pid : 0,
    host: typeof host === 'string' ? host : '',
    expiresAt: typeof expiresAt === 'number' ? expiresAt : 0,
  };
}

/** Makes `owner` (this process) the holder of `sessionId` until `now + leaseMs`, whoever held it. */
export async function takeLease(
  transaction: SqlExecutor,
  sessionId: string,
  owner: string,
  expiresAt: number,
): Promise<void> {
  const { pid, host } = currentLeaseHolder();
  await transaction.execute({
    sql: `INSERT INTO ghost_session_leases (session_id, owner, pid, host, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at`,
    args: [sessionId, owner, pid, host, expiresAt],
  });
}

/** Extends `owner`'s lease to `expiresAt`; resolves `false` when it is no longer `owner`'s. */
export async function renewLease(
  transaction: SqlExecutor,
  sessionId: string,
  owner: string,
  expiresAt: number,
): Promise<boolean> {
  const result = await transaction.execute({
    sql: 'UPDATE ghost_session_leases SET expires_at = ? WHERE session_id = ? AND owner = ?',
    args: [expiresAt, sessionId, owner],
  });
  return result.rowsAffected === 1;
}

/** Ends `owner`'s lease of `sessionId`; does nothing when someone else holds it now. */
export async function dropLease(transaction: SqlExecutor, sessionId: string, owner: string): Promise<void> {
  await transaction.execute({
    sql: 'DELETE FROM ghost_session_leases WHERE session_id = ? AND owner = ?',
    args: [sessionId, owner],
  });
}
