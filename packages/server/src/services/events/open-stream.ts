import { AppError } from '../../errors.js';

/** Parses a client's `Last-Event-ID`: a non-negative integer (the `seq` of the last event seen). */
export function parseLastEventId(value: string | undefined | null): number | undefined {
  if (value === undefined || value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,15}$/.test(trimmed)) {
    throw new AppError('VALIDATION_ERROR', 'lastEventId (Last-Event-ID) must be the id of a streamed event');
  }
  return Number(trimmed);
}
