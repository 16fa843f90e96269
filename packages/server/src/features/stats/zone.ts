/**
 * Wall-clock arithmetic in an IANA zone through `Intl` (no library: these few rules are all we need).
 * Both caches hold canonical zone names only (the schemas canonicalise `timezone`): a client's
 * spelling of a zone never adds an entry, so they are bounded by the runtime's zones.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (format.resolvedOptions().timeZone === zone) formats.set(zone, format);
  }
  return format;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallTimeAt(zone: string, ms: number): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
  };
}

function offsetByIntl(zone: string, ms: number): number {
  const w = wallTimeAt(zone, ms);
  const whole = ms - (((ms % 1000) + 1000) % 1000);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - whole;
}

const SLOT = 900_000;
/** Offsets per zone and 15-minute slot: `Intl` costs tens of µs a call, and a 90-day series needs hundreds. */
const offsets = new Map<string, number>();

/** The zone's offset from UTC at an instant, in ms (local minus UTC). */
function offsetAt(zone: string, ms: number): number {
  const slot = Math.floor(ms / SLOT);
  const key = `${zone}|${slot}`;
  const known = offsets.get(key);
  if (known !== undefined) return known;
  const offset = offsetByIntl(zone, ms);
  // Kept only when the whole slot has one offset (a change inside it is asked of Intl each time).
  if (
    formats.has(zone) &&
    offsetByIntl(zone, slot * SLOT) === offset &&
    offsetByIntl(zone, slot * SLOT + SLOT - 1) === offset
  ) {
    if (offsets.size > 200_000) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/** The wall time of an instant: UTC fields of the instant moved by the zone's offset. */
function wallTimeOf(zone: string, ms: number): WallTime {
  const d = new Date(ms + offsetAt(zone, ms));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/**
 * The instant of local midnight starting `day` (days since 1970-01-01) in `zone`. Where midnight
 * does not exist (a zone moving its clocks at 00:00), the first instant of that day.
 */
export function localMidnight(zone: string, day: number): number {
  const wall = day * 86_400_000;
  const first = wall - offsetAt(zone, wall);
  const second = wall - offsetAt(zone, first);
  if (second === first) return first;
  // The offset changed between the guesses: midnight falls in a gap or an overlap; take the
  // earliest candidate that still reads as this day locally.
  const candidates = [first, second].sort((a, b) => a - b);
  for (const t of candidates) {
    const w = wallTimeOf(zone, t);
    if (Date.UTC(w.year, w.month - 1, w.day) === wall) return t;
  }
  return candidates[1]!;
}

/** `2026-03-08T00:00:00-05:00`: the instant as the zone's wall time with its offset. */
export function isoInZone(zone: string, ms: number): string {
  const w = wallTimeOf(zone, ms);
  const offsetMinutes = Math.round(offsetAt(zone, ms) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** The zones of both caches (a test reads them: canonical names only). */
export function cachedZones(): { formats: number; offsets: number } {
  return { formats: formats.size, offsets: new Set([...offsets.keys()].map((key) => key.split('|')[0])).size };
}

/** Days since 1970-01-01 -> `YYYY-MM-DD`. */
export function dateOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** The local date of an instant in `zone`, as days since 1970-01-01. */
export function localDayOf(zone: string, ms: number): number {
  const w = wallTimeOf(zone, ms);
  return Date.UTC(w.year, w.month - 1, w.day) / 86_400_000;
}
