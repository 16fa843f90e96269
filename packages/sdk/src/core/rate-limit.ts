/**
 * The rate-limit state a response announces, read from its headers (see {@link parseRateLimit}).
 * Every number is as the server sent it; a field the server did not send is `null`.
 */
export interface RateLimit {
  /** Requests allowed in the window (the quota). */
  limit: number | null;
  /** Requests left in the current window. */
  remaining: number | null;
  /** Seconds until the window ends and the quota is restored. */
  resetSeconds: number | null;
  /** When the window ends: the response's arrival plus `resetSeconds`. */
  resetAt: Date | null;
  /** The window's length in seconds, when a policy states it (`w`). */
  windowSeconds: number | null;
  /**
   * The policy's name, when there is one: the IETF `RateLimit` item's, or a named
   * `RateLimit-Policy` beside the separate fields (this API names a tag's volume quota so on its
   * 429, e.g. `tag-events`).
   */
  policy: string | null;
  /**
   * Which headers it came from: the IETF draft's structured `RateLimit` (with `RateLimit-Policy`),
   * the separate `RateLimit-Limit` / `-Remaining` / `-Reset` fields (what this API sends), or
   * `X-RateLimit-*`.
   */
  source: 'RateLimit' | 'RateLimit-*' | 'X-RateLimit-*';
}

/** A non-negative integer (or decimal) at the start of a header value, e.g. `100` of `100, 100;w=60`. */
function leadingNumber(value: string | null): number | null {
  if (value === null) return null;
  const match = /^\s*(\d+(?:\.\d+)?)/.exec(value);
  return match ? Number(match[1]) : null;
}

interface Item {
  /** The item itself: a string's content or a token (`"default"` -> `default`). */
  value: string;
  /** The item as written, quotes included. */
  raw: string;
  params: Map<string, string>;
}

/** Splits on `sep` outside double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\\' && quoted) {
      current += char + (text[i + 1] ?? '');
      i++;
    } else if (char === '"') {
      quoted = !quoted;
      current += char;
    } else if (char === sep && !quoted) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

const unquote = (text: string): string => (/^".*"$/.test(text) ? text.slice(1, -1).replace(/\\(.)/g, '$1') : text);

/**
 * A Structured Fields list (RFC 9651) read leniently: `"name";r=50;t=30, "other";r=1`. Also
 * reads a dictionary (`limit=100, remaining=50`) as items whose value holds the `=`.
 */
function parseList(header: string): Item[] {
  const items: Item[] = [];
  for (const member of splitOutsideQuotes(header, ',')) {
    const [head = '', ...rest] = splitOutsideQuotes(member, ';').map((part) => part.trim());
    if (head === '') continue;
    const params = new Map<string, string>();
    for (const param of rest) {
      const eq = param.indexOf('=');
      if (eq === -1) params.set(param.toLowerCase(), '?1');
      else params.set(param.slice(0, eq).trim().toLowerCase(), unquote(param.slice(eq + 1).trim()));
    }
    items.push({ value: unquote(head), raw: head, params });
  }
  return items;
}

const numberParam = (params: Map<string, string> | undefined, key: string): number | null => {
  const value = params?.get(key);
  if (value === undefined || !/^\d+(?:\.\d+)?$/.test(value)) return null;
  return Number(value);
};

function withReset(partial: Omit<RateLimit, 'resetAt'>, now: number): RateLimit {
  const resetAt = partial.resetSeconds === null ? null : new Date(now + partial.resetSeconds * 1000);
  return { ...partial, resetAt };
}

/**
 * The IETF draft's `RateLimit` field (draft-ietf-httpapi-ratelimit-headers-08 and later):
 * `RateLimit: "default";r=50;t=30` with `RateLimit-Policy: "default";q=100;w=60`. With several
 * policies the one with the fewest requests remaining is reported. Also the -07 dictionary form,
 * `RateLimit: limit=100, remaining=50, reset=30` (with `RateLimit-Policy: 100;w=60`).
 */
function fromStructured(header: string, policyHeader: string | null, now: number): RateLimit | undefined {
  const items = parseList(header);
  const policies = policyHeader === null ? [] : parseList(policyHeader);
  const dictionary = new Map<string, string>();
  for (const item of items) {
    const eq = item.raw.startsWith('"') ? -1 : item.raw.indexOf('=');
    if (eq > 0) dictionary.set(item.raw.slice(0, eq).trim().toLowerCase(), item.raw.slice(eq + 1).trim());
  }
  if (dictionary.size > 0) {
    const limit = leadingNumber(dictionary.get('limit') ?? null);
    const remaining = leadingNumber(dictionary.get('remaining') ?? null);
    const resetSeconds = leadingNumber(dictionary.get('reset') ?? null);
    if (limit === null && remaining === null && resetSeconds === null) return undefined;
    const windowSeconds = numberParam(policies[0]?.params, 'w');
    return withReset({ limit, remaining, resetSeconds, windowSeconds, policy: null, source: 'RateLimit' }, now);
  }
  let chosen: Item | undefined;
  for (const item of items) {
    const remaining = numberParam(item.params, 'r');
    if (remaining === null && numberParam(item.params, 't') === null) continue;
    const best = chosen === undefined ? null : numberParam(chosen.params, 'r');
    if (chosen === undefined || (remaining !== null && (best === null || remaining < best))) chosen = item;
  }
  if (chosen === undefined) return undefined;
  const policy =
    policies.find((item) => item.value === chosen.value) ?? (policies.length === 1 ? policies[0] : undefined);
  return withReset(
    {
      limit: numberParam(policy?.params, 'q'),
      remaining: numberParam(chosen.params, 'r'),
      resetSeconds: numberParam(chosen.params, 't'),
      windowSeconds: numberParam(policy?.params, 'w'),
      policy: chosen.value,
      source: 'RateLimit',
    },
    now,
  );
}

/** Above this an `X-RateLimit-Reset` is a Unix time in seconds (GitHub's form), not a delay. */
const EPOCH_SECONDS_THRESHOLD = 1_000_000_000;

/**
 * The rate-limit state of a response, from (first found wins):
 * 1. the IETF draft's structured `RateLimit` and `RateLimit-Policy` fields;
 * 2. `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds; earlier drafts, and
 *    what this API sends); a `w=` in `RateLimit-Limit` or `RateLimit-Policy` gives the window;
 * 3. `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (seconds, or a Unix time
 *    in seconds when it is that large).
 * `undefined` when the response has none of them.
 */
export function parseRateLimit(headers: Headers, now: number = Date.now()): RateLimit | undefined {
  const structured = headers.get('ratelimit');
  if (structured !== null) {
    const parsed = fromStructured(structured, headers.get('ratelimit-policy'), now);
    if (parsed) return parsed;
  }
  for (const prefix of ['ratelimit', 'x-ratelimit'] as const) {
    const limitHeader = headers.get(`${prefix}-limit`);
    const limit = leadingNumber(limitHeader);
    const remaining = leadingNumber(headers.get(`${prefix}-remaining`));
    let resetSeconds = leadingNumber(headers.get(`${prefix}-reset`));
    if (limit === null && remaining === null && resetSeconds === null) continue;
    if (prefix === 'x-ratelimit' && resetSeconds !== null && resetSeconds >= EPOCH_SECONDS_THRESHOLD) {
      resetSeconds = Math.max(0, Math.ceil(resetSeconds - now / 1000));
    }
    const policyItem = parseList(headers.get(`${prefix}-policy`) ?? limitHeader ?? '').find((item) =>
      item.params.has('w'),
    );
    // A name is a string or a token, not the bare quota number of the early drafts (`100;w=60`).
    const policyName = policyItem && !/^\d/.test(policyItem.raw) ? policyItem.value : null;
    return withReset(
      {
        limit,
        remaining,
        resetSeconds,
        windowSeconds: numberParam(policyItem?.params, 'w'),
        policy: policyName,
        source: prefix === 'ratelimit' ? 'RateLimit-*' : 'X-RateLimit-*',
      },
      now,
    );
  }
  return undefined;
}
