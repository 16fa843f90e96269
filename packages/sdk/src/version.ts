declare const __SDK_VERSION__: string;

/** The SDK version, taken from package.json at build time (tsup `define`; vitest defines it too). */
export const VERSION: string = __SDK_VERSION__;
