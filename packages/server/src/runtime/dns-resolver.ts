import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { getServers } from 'node:dns';
import { isIP } from 'node:net';
import dnsPacket from 'dns-packet';
import { DnsUnavailableError } from '../kernel/lookup-errors.js';

/** The record types the tag checks ask for. */
type QueryType = 'CNAME' | 'A' | 'AAAA';

/** One record of an answer section, as received (owner name and data lower-cased, no trailing dot). */
export interface AnswerRecord {
  type: QueryType;
  name: string;
  value: string;
}

/** A DNS answer: NXDOMAIN and NOERROR are answers; everything else throws {@link DnsUnavailableError}. */
interface DnsAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  /** The answer section's CNAME/A/AAAA records, whatever their owner name: the caller checks it. */
  records: AnswerRecord[];
}

export interface DnsResolver {
  /** Resolves within `timeoutMs` (default: the resolver's budget) or throws DnsUnavailableError. */
  query(name: string, type: QueryType, timeoutMs?: number): Promise<DnsAnswer>;
  /** The budget of one query (DNS_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

export interface DnsResolverOptions {
  /** `ip[:port]` entries (`[v6]:port` for IPv6 with a port); empty or undefined: the system's resolvers. */
  servers?: string[] | undefined;
  /** Budget of one query, its retry included. */
  timeoutMs: number;
}

interface Server {
  host: string;
  port: number;
}

function parseServer(entry: string): Server {
  const v6 = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : 53 };
  if (isIP(entry) === 6) return { host: entry, port: 53 };
  const [host, port] = entry.split(':');
  return { host: host!, port: port ? Number(port) : 53 };
}

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** One UDP exchange: a random query id on a fresh socket. */
function exchange(server: Server, name: string, type: QueryType, timeoutMs: number): Promise<DnsAnswer> {
  return new Promise<DnsAnswer>((resolve, reject) => {
    const id = randomInt(0, 65536);
    const socket = dgram.createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    let settled = false;
    const finish = (error: Error | null, answer?: DnsAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(answer!);
    };
    const timer = setTimeout(() => finish(new DnsUnavailableError('ETIMEOUT')), timeoutMs);
    socket.on('error', (error) => finish(new DnsUnavailableError('ESOCKET', { cause: error })));
    socket.on('message', (message) => {
      let reply: dnsPacket.DecodedPacket & { rcode?: string };
      try {
        reply = dnsPacket.decode(message) as typeof reply;
      } catch {
        return;
      }
      const question = reply.questions?.[0];
      if (reply.type !== 'response' || reply.id !== id || !question) return;
      if (canonical(question.name) !== canonical(name) || question.type !== type) return;
      if (reply.flag_tc) return finish(new DnsUnavailableError('ETRUNCATED'));
      const rcode = reply.rcode ?? 'NOERROR';
      if (rcode !== 'NOERROR' && rcode !== 'NXDOMAIN') return finish(new DnsUnavailableError(rcode));
      const records: AnswerRecord[] = [];
      for (const answer of reply.answers ?? []) {
        if (answer.type !== 'CNAME' && answer.type !== 'A' && answer.type !== 'AAAA') continue;
        records.push({ type: answer.type, name: canonical(answer.name), value: canonical(String(answer.data)) });
      }
      finish(null, { rcode, records });
    });
    const packet = dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type, name, class: 'IN' }],
    });
    socket.send(packet, server.port, server.host, (error) => {
      if (error) finish(new DnsUnavailableError('ESEND', { cause: error }));
    });
  });
}

/** A small stub resolver over UDP that returns whole answer sections. */
export function createDnsResolver(options: DnsResolverOptions): DnsResolver {
  const entries = options.servers && options.servers.length > 0 ? options.servers : getServers();
  const servers = entries.map(parseServer);
  let next = 0;
  return {
    timeoutMs: options.timeoutMs,
    async query(name, type, timeoutMs = options.timeoutMs) {
      if (servers.length === 0) throw new DnsUnavailableError('no DNS servers configured');
      const perTry = Math.max(50, Math.floor(timeoutMs / 2));
      let last: unknown;
      for (let attempt = 0; attempt < 2; attempt++) {
        const server = servers[next++ % servers.length]!;
        try {
          return await exchange(server, name, type, perTry);
        } catch (error) {
          last = error;
        }
      }
      throw last instanceof DnsUnavailableError ? last : new DnsUnavailableError('lookup failed', { cause: last });
    },
  };
}
