/**
 * What a failed command said, kept to explain the failure (issue 26): its last lines, and also the first lines that
 * look like an error when they have scrolled out of those. npm prints its error first and its usage text after
 * it; node prints the exception, then its own version: the last lines alone miss the point.
 */

/** Lines kept: what `failure_output` shows. */
export const FAILURE_LINES = 20;
/** Of those, lines from the first error line on, kept when the error scrolled out of the last lines. */
const ERROR_LINES = 8;

/**
 * A line that states an error: an exception's message (`TypeError: ...`), a tool's error prefix (npm, git, cargo,
 * Go's panic), a shell's complaint. Case matters for the short words, so that "0 errors" is not one.
 */
const ERROR_LINE =
  /^\s*(\w*(Error|Exception)\b:?\s|npm (ERR!|error)\s|error(\[\w+\])?:|ERROR\b|fatal:|panic:|Traceback \(most recent call last\))|: (command )?not found$|Cannot find module|No such file or directory|Permission denied/;

/** An exception's own message line (`Error: Cannot find module 'x'`): the best one-line reason there is. */
const EXCEPTION_LINE = /^\s*\w*(Error|Exception):\s+\S/;
/** npm's lines that name only a code, with the explanation on the lines after. */
const BARE_CODE = /^npm (ERR!|error) (code|errno|syscall) /;

export function isErrorLine(line: string): boolean {
  return ERROR_LINE.test(line);
}

/** Collects a stream's lines in bounded memory: the last FAILURE_LINES, and ERROR_LINES from the first error line. */
export class OutputTail {
  private readonly last: string[] = [];
  private readonly error: string[] = [];
  private errorAt = -1;
  private count = 0;

  push(line: string): void {
    const index = this.count++;
    if (this.errorAt === -1 && isErrorLine(line)) this.errorAt = index;
    if (this.errorAt !== -1 && index - this.errorAt < ERROR_LINES) this.error.push(line);
    this.last.push(line);
    if (this.last.length > FAILURE_LINES) this.last.shift();
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** At most FAILURE_LINES (and a marker of the lines left out): the error's first lines, then the last ones. */
  lines(): string[] {
    if (this.errorAt === -1 || this.count - this.errorAt <= FAILURE_LINES) return [...this.last];
    const keepLast = FAILURE_LINES - ERROR_LINES - 1;
    const skipped = this.count - this.errorAt - ERROR_LINES - keepLast;
    return [...this.error, `[... ${skipped} lines ...]`, ...this.last.slice(-keepLast)];
  }
}

/** The line that best says what went wrong: an exception's message, else the first error line, else the last line. */
export function failureReason(lines: string[]): string | undefined {
  return (
    lines.find((line) => EXCEPTION_LINE.test(line)) ??
    lines.find((line) => isErrorLine(line) && !BARE_CODE.test(line)) ??
    lines.findLast((line) => line.trim() !== '')
  )?.trim();
}

/** The OutputTail of text already whole (a failed clone's stderr). */
export function tailOf(text: string): OutputTail {
  const tail = new OutputTail();
  for (const line of text.split('\n')) tail.push(line);
  return tail;
}
