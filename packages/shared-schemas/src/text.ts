/**
 * Well-formed text (security round, finding 5): a lone UTF-16 surrogate passes `z.string()` but
 * PostgreSQL refuses it (a 500 and a failed group-commit batch before). Every text input is checked
 * with `String.prototype.isWellFormed` (Node 20; ES2024, typed here as the lib is ES2023).
 */
export const WELL_FORMED_MESSAGE = 'text must be well-formed Unicode (no lone UTF-16 surrogates)';

export function isWellFormedText(value: string): boolean {
  return (value as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * U+0000 (NUL): PostgreSQL cannot hold it in text, and JSON text holding its escape (`\u0000`) is
 * stored but breaks every later cast to jsonb (issue 51, finding 1): refused in an event's text and data.
 */
export const NUL_MESSAGE = 'text must not contain U+0000 (NUL)';

export function isNulFree(value: string): boolean {
  return !value.includes('\u0000');
}

/** What is wrong with the strings and object keys inside `value` (any JSON), if anything. */
export type DeepTextProblem = 'malformed' | 'nul';

function textProblem(text: string): DeepTextProblem | undefined {
  if (!isWellFormedText(text)) return 'malformed';
  return isNulFree(text) ? undefined : 'nul';
}

/** The first problem of a string or key inside `value`: a lone surrogate or a U+0000; undefined when none. */
export function deepTextProblem(value: unknown): DeepTextProblem | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      const problem = textProblem(current);
      if (problem) return problem;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (current !== null && typeof current === 'object') {
      // for...in, not Object.entries: no pair arrays per key (run on every collected event).
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        const problem = textProblem(key);
        if (problem) return problem;
        pending.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return undefined;
}

/** The longest `data` of one event, serialized as JSON (finding 6). */
export const EVENT_DATA_MAX_CHARS = 16 * 1024;
