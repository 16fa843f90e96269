/**
 * Well-formed text (security round, finding 5): a lone UTF-16 surrogate passes `z.string()` but
 * PostgreSQL refuses it (a 500 and a failed group-commit batch before). Every text input is checked
 * with `String.prototype.isWellFormed` (Node 20; ES2024, typed here as the lib is ES2023).
 */
export const WELL_FORMED_MESSAGE = 'text must be well-formed Unicode (no lone UTF-16 surrogates)';

export function isWellFormedText(value: string): boolean {
  return (value as string & { isWellFormed(): boolean }).isWellFormed();
}

/** True when every string and object key inside `value` (any JSON) is well-formed. */
export function isWellFormedDeep(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      if (!isWellFormedText(current)) return false;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (current !== null && typeof current === 'object') {
      // for...in, not Object.entries: no pair arrays per key (run on every collected event).
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        if (!isWellFormedText(key)) return false;
        pending.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}

/** The longest `data` of one event, serialized as JSON (finding 6). */
export const EVENT_DATA_MAX_CHARS = 16 * 1024;
