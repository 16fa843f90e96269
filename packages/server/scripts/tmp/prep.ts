import { openClickhouse } from '../../src/db/clickhouse/client.ts';
import { migrateClickhouse } from '../../src/db/clickhouse/migrate.ts';
async function main() {
const [path, db, src] = process.argv.slice(2);
const ch = await openClickhouse({ kind: 'chdb', path, database: db });
await migrateClickhouse(ch);
const t = Date.now();
await ch.command(`INSERT INTO events SELECT merchant_id, event_time, visitor, seq, event_name, path, referrer, utm_source, utm_medium, utm_campaign, currency, toDecimal256(revenue, 30), if(revenue != 0, 1, 0), 'not_required', true FROM default.${src}`, undefined, { timeoutMs: 3_600_000 });
console.log('copied', Date.now() - t);
await ch.command('OPTIMIZE TABLE events FINAL', undefined, { timeoutMs: 3_600_000 });
console.log('optimized', Date.now() - t);
console.log(await ch.query(`SELECT sum(bytes_on_disk)/1e6 MB, sum(rows) rows FROM system.parts WHERE active AND database = currentDatabase() AND table = 'events'`));
await ch.close();
}
main();
