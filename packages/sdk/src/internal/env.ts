interface ProcessLike {
  env?: Record<string, string | undefined>;
}

/**
 * Reads an environment variable where a `process.env` exists (Node, Bun, Deno's Node compatibility);
 * `undefined` elsewhere (browsers, edge runtimes) and for empty values. Never imports `node:process`.
 */
export function readEnv(name: string): string | undefined {
  const proc = (globalThis as { process?: ProcessLike }).process;
  if (typeof proc !== 'object' || proc === null || typeof proc.env !== 'object' || proc.env === null) {
    return undefined;
  }
  const value = proc.env[name]?.trim();
  return value ? value : undefined;
}
