import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/** What the loopback DNS server answers for a name. */
export type DnsBehaviour =
  /** A CNAME; `owner`: answer it under another owner name (a lying or broken resolver). */
  | { kind: 'cname'; target: string; owner?: string }
  | { kind: 'a'; address: string }
  | { kind: 'aaaa'; address: string }
  | { kind: 'servfail' }
  | { kind: 'refused' }
  | { kind: 'drop' };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  port: number;
  setCname(name: string, target: string): void;
  set(name: string, behaviour: DnsBehaviour): void;
  clear(name?: string): void;
  /** Queries received so far (lower-cased names). */
  queries: string[];
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** The table entry for `name`: its own, else the closest wildcard `*.<parent>` above it. */
function lookup(records: Map<string, DnsBehaviour>, name: string): DnsBehaviour | undefined {
  const own = records.get(name);
  if (own) return own;
  const labels = name.split('.');
  for (let i = 1; i < labels.length; i++) {
    const wildcard = records.get(`*.${labels.slice(i).join('.')}`);
    if (wildcard) return wildcard;
  }
  return undefined;
}

/** A real DNS server on loopback UDP for tests: answers CNAME, A and AAAA queries from a table. */
export async function startTestDnsServer(options: { port?: number } = {}): Promise<TestDnsServer> {
  const records = new Map<string, DnsBehaviour>();
  const queries: string[] = [];
  const socket = dgram.createSocket('udp4');

  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push(name);
    const behaviour = lookup(records, name);
    if (behaviour?.kind === 'drop') return;
    let rcode: number = RCODE.NOERROR;
    const answers: dnsPacket.Answer[] = [];
    if (!behaviour) rcode = RCODE.NXDOMAIN;
    else if (behaviour.kind === 'servfail') rcode = RCODE.SERVFAIL;
    else if (behaviour.kind === 'refused') rcode = RCODE.REFUSED;
    else if (behaviour.kind === 'cname' && ['CNAME', 'A', 'AAAA'].includes(question.type)) {
      answers.push({ type: 'CNAME', name: behaviour.owner ?? question.name, ttl: 300, data: behaviour.target });
    } else if (behaviour.kind === 'a' && question.type === 'A') {
      answers.push({ type: 'A', name: question.name, ttl: 300, data: behaviour.address });
    } else if (behaviour.kind === 'aaaa' && question.type === 'AAAA') {
      answers.push({ type: 'AAAA', name: question.name, ttl: 300, data: behaviour.address });
    }
    const response = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: query.questions,
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.port ?? 0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    setCname: (name, target) => records.set(name.toLowerCase(), { kind: 'cname', target }),
    set: (name, behaviour) => records.set(name.toLowerCase(), behaviour),
    clear: (name) => (name ? records.delete(name.toLowerCase()) : records.clear()),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
