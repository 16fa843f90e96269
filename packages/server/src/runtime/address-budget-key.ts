import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What a forwarded hop that is not an address keys as, at most (the store never gets a long header). */
const MAX_OTHER_KEY = 64;

/** The key of an address's budgets. */
export function addressBudgetKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  if (ipaddr.IPv6.isValid(ip)) {
    const parsed = ipaddr.IPv6.parse(ip);
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
    const [a, b, c, d] = parsed.parts;
    return `${a!.toString(16)}:${b!.toString(16)}:${c!.toString(16)}:${d!.toString(16)}::/64`;
  }
  const withPort = /^(?:\[([^\]]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/.exec(ip);
  const bare = withPort?.[1] ?? withPort?.[2];
  if (bare && (isIPv4(bare) || ipaddr.IPv6.isValid(bare))) return addressBudgetKey(bare);
  return ip.length > MAX_OTHER_KEY ? ip.slice(0, MAX_OTHER_KEY) : ip;
}
