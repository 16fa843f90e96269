/** A progress bar on stderr: redrawn in place on a terminal, a line every 10% otherwise. */
export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private lastDecile = -1;
  private done = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  add(count: number): void {
    this.done += count;
    const now = Date.now();
    const tty = process.stderr.isTTY;
    const decile = Math.floor((this.done / this.total) * 10);
    if (tty ? now - this.lastDraw < 100 && this.done < this.total : decile === this.lastDecile) return;
    this.lastDraw = now;
    this.lastDecile = decile;
    process.stderr.write(`${tty ? '\r' : ''}${this.line()}${tty ? '' : '\n'}`);
  }

  finish(): void {
    if (process.stderr.isTTY) process.stderr.write(`\r${this.line()}\n`);
  }

  private line(): string {
    const fraction = this.total === 0 ? 1 : Math.min(1, this.done / this.total);
    const width = 30;
    const filled = Math.round(fraction * width);
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const eta = rate > 0 ? Math.max(0, (this.total - this.done) / rate) : 0;
    return `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${Math.round(rate).toLocaleString('en-US')}/s ETA ${eta.toFixed(0)}s  `;
  }
}
