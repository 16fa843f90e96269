import type { AppDeps } from '../../context.js';
import type { DatabaseHandle } from '../../db/client.js';
import { AppError, errorResponse } from '../../kernel/errors.js';

/** `/readyz`: the database and the event log reported separately. */
export async function readiness(
  deps: AppDeps,
  database: DatabaseHandle,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const [db, log] = await Promise.all([
    database.ping(1500).then(
      () => 'up' as const,
      () => 'down' as const,
    ),
    deps.eventLog ? deps.eventLog.ping(1500).then((ok) => (ok ? ('up' as const) : ('down' as const))) : 'off',
  ]);
  const role = deps.env.ROLE;
  const needed: string[] = deps.eventLog ? (role === 'writer' ? [log, db] : [log]) : [db];
  const ready = needed.every((state) => state === 'up');
  const checks = { database: db, log };
  if (ready) return { status: 200, body: { status: 'ready', checks } };
  const what = log === 'down' ? 'The event log is not answering' : 'The database is not answering';
  const { status, body } = errorResponse(new AppError('NOT_READY', what));
  return { status, body: { ...body, status: 'unavailable', checks } };
}
