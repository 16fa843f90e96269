/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it; the probe is closed). */
export function freePort(): Promise<number>;
