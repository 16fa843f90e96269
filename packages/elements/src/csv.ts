// CSV downloads: the goals card's CSV made here (the API has no CSV of the summary), with the
// server's rules (packages/server/src/transport/rest/stats-csv.ts); the others are the API's own
// CSV answers. A download is a Blob behind an object URL on a link clicked from script: no
// navigation, no inline script, so it works under a page's strict CSP.
import type { StatsGoalTotals } from '@partner/sdk';

type Cell = string | number;

/**
 * One field, RFC 4180: quoted when it holds a quote, comma or line break. Text that a spreadsheet
 * would run as a formula (=, +, -, @, tab, CR first) is prefixed with `'`, as the server does.
 */
export function csvField(cell: Cell): string {
  if (typeof cell === 'number') return String(cell);
  const safe = /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A header row and rows, CRLF after each line. */
export const csvTable = (header: string[], rows: Cell[][]): string =>
  `${[header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n')}\r\n`;

/** The goals card's CSV: every figure of the summary's goals, in its order. */
export const goalsCsv = (goals: StatsGoalTotals[]): string =>
  csvTable(
    ['goal_id', 'name', 'conversions', 'visitors', 'conversion_rate'],
    goals.map((g) => [g.goalId, g.name, g.conversions, g.visitors, g.conversionRate]),
  );

/** Saves `text` as `filename` (text/csv) through a Blob's object URL. */
export function saveCsv(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // Revoked once the browser has surely started reading it.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}
