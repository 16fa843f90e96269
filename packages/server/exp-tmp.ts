import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { dataQuery } from './src/services/events/list-events.js';
import { copyRows } from './src/db/copy-rows.js';
import { readRows } from './src/db/read-rows.js';
import { ndjsonFromCopy } from './src/services/events/ndjson-from-copy.js';
const url = 'postgres://postgres@127.0.0.1:5432/' + process.argv[2];
const client = postgres(url, { max: 4, onnotice: () => {} });
const db = drizzle({ client }) as any;
const [m] = await client`select m.id, m.partner_id from merchants m limit 1`;
const filters = { names: [], start: null, end: null };
const B = Number(process.env.B ?? 5000);
const sort = { sortBy: 'event_time' as const, sortOrder: 'asc' as const, page: 1, limit: B - 1 };
type Batch = { text: string | Buffer; last: string; k: number };
async function fetchBatch(mode: string, pos: any): Promise<Batch> {
  if (mode === 'copy') {
    const c = (await copyLines(db, dataQuery(m.partner_id, m.id, sort, filters, pos, 'line')))!;
    const b = c.bytes;
    return { text: b, k: c.lines, last: c.lines ? b.toString('utf8', b.lastIndexOf(10, b.length - 2) + 1, b.length - 1) : '' };
  }
  if (mode === 'xform') {
    const c = (await copyRows(db, dataQuery(m.partner_id, m.id, sort, filters, pos, 'fields')))!;
    const r = ndjsonFromCopy(c.bytes, c.rows);
    return { text: r.bytes, k: r.lines, last: r.lines ? r.bytes.toString('utf8', r.lastLine, r.bytes.length - 1) : '' };
  }
  if (mode === 'rows') {
    const [rows] = await readRows(db, [dataQuery(m.partner_id, m.id, sort, filters, pos, 'line')]);
    let text = ''; for (const r of rows!) text += r.line + '\n';
    return { text, k: rows!.length, last: rows!.length ? (rows![rows!.length - 1]!.line as string) : '' };
  }
  const [rows] = await readRows(db, [dataQuery(m.partner_id, m.id, sort, filters, pos, 'fields')]);
  let text = '';
  for (const r of rows!) text += `{"id":${JSON.stringify(r.id)},"muid":${JSON.stringify(r.muid)},"event_name":${JSON.stringify(r.event_name)},"event_time":"${r.event_time}","raw_data":${JSON.stringify(r.raw_data)}}\n`;
  const l = rows![rows!.length - 1];
  return { text, k: rows!.length, last: l ? JSON.stringify({ id: l.id, event_name: l.event_name, event_time: l.event_time }) : '' };
}
for (const mode of (process.env.MODES ?? 'copy,rows,fields,copy,rows,fields').split(',')) {
  const t = performance.now(); const cpu0 = process.cpuUsage();
  let pos: any = null; let n = 0; let bytes = 0;
  let next = fetchBatch(mode, pos);
  for (;;) {
    const b = await next;
    n += b.k; bytes += b.text.length;
    if (b.k < B) break;
    const j = JSON.parse(b.last); pos = { page: 2, time: j.event_time, id: j.id };
    next = fetchBatch(mode, pos);
    Buffer.from(b.text as string); // stand-in for the socket write's encode
  }
  const cu = process.cpuUsage(cpu0); console.log(mode, n, bytes, (performance.now() - t).toFixed(0), 'ms', 'node cpu', ((cu.user + cu.system) / 1000).toFixed(0));
}
await client.end();
