/** Progress lines go to stderr; stdout carries only the report. */
export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
