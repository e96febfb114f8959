// Request loggers made on first use: most requests log nothing, and a pino child costs a serialisation of its bindings.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Parent = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };

/* eslint-disable @typescript-eslint/no-explicit-any -- pino's LogFn overloads take anything */

/**
 * Stands for `parent.child(bindings)` and creates it only when a line at an enabled level is written (or its
 * level is changed). A child of a child that was never used just merges the bindings.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #real?: FastifyBaseLogger;

  constructor(
    private readonly parent: Parent,
    private readonly bindings: Bindings,
    private readonly options?: ChildLoggerOptions,
    /** Bindings a never-used child added, merged only if a line is written. */
    private readonly more?: Bindings,
  ) {}

  get level(): string {
    return this.#real?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    if (this.#real || options || this.options) return this.real().child(bindings, options);
    return new LazyChildLogger(this.parent, this.more ? { ...this.bindings, ...this.more } : this.bindings, undefined, bindings);
  }

  fatal(...args: any[]): void {
    this.write('fatal', args);
  }
  error(...args: any[]): void {
    this.write('error', args);
  }
  warn(...args: any[]): void {
    this.write('warn', args);
  }
  info(...args: any[]): void {
    this.write('info', args);
  }
  debug(...args: any[]): void {
    this.write('debug', args);
  }
  trace(...args: any[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  /** Whether a line at `level` would be written (asked of the parent while no child was made). */
  isLevelEnabled(level: string): boolean {
    const logger = (this.#real ?? this.parent) as Parent;
    return logger.isLevelEnabled ? logger.isLevelEnabled(level) : true;
  }

  private write(level: Level, args: unknown[]): void {
    if (!this.#real && this.parent.isLevelEnabled && !this.parent.isLevelEnabled(level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  private real(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(this.more ? { ...this.bindings, ...this.more } : this.bindings, this.options));
  }
}
