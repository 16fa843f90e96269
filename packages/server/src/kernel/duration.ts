const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `0`, `90s`, `30m`, `24h`, `7d` (or a bare number of seconds) to milliseconds; null when invalid. */
export function parseDuration(value: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) return null;
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000));
}
