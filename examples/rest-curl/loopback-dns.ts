// A loopback DNS server for the example's custom-domain verification step, used when no real
// domain is given (CUSTOM_DOMAIN unset). It is the test suite's real UDP DNS server on 127.0.0.1;
// the API server must resolve through it: start the server with DNS_SERVERS=127.0.0.1:<port>.
//   node --import tsx loopback-dns.ts --port 15353
// Line protocol on stdin: `cname <name> <target>` publishes a CNAME and answers `ok`; it prints
// `ready 127.0.0.1:<port>` once listening and stops when stdin closes.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startTestDnsServer } from '@partner/server/testing/dns-server';

const { values } = parseArgs({ options: { port: { type: 'string', default: '15353' } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write(`loopback-dns: --port must be 1..65535, got ${values.port}\n`);
  process.exit(2);
}
const dns = await startTestDnsServer({ port }).catch((error: unknown) => {
  process.stderr.write(
    `loopback-dns: cannot listen on udp 127.0.0.1:${port} (${error instanceof Error ? error.message : error})\n`,
  );
  process.exit(1);
});
process.stdout.write(`ready ${dns.address}\n`);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, name, target] = line.trim().split(/\s+/);
  if (command === 'cname' && name && target) {
    dns.setCname(name, target);
    process.stdout.write('ok\n');
  } else {
    process.stdout.write(`error: unknown command ${JSON.stringify(line)}\n`);
  }
});
lines.on('close', () => void dns.close());
