import { MIN_SPLIT_FRAGMENT, type Redactor, redactedMark } from '../../platform/redaction/redactor.js';
import { parseEvent } from '../../runs/index.js';

export interface Line {
  stream: 'input' | 'output';
  line: string;
}

/** The text a line shows a reader: a protocol `text` event's text (which joins the next one's), or a plain line. */
function contentOf(line: string): { text: string; json: boolean } | null {
  if (!line.startsWith('{')) return { text: line, json: false };
  const event = parseEvent(line);
  return event?.type === 'text' ? { text: event.text, json: true } : null;
}

const jsonForm = (text: string) => JSON.stringify(text).slice(1, -1);

/** The longest start of `value` (at least `min` characters, not all of it) that `text` ends with, or 0. */
function endingPrefix(text: string, value: string, min: number): number {
  const window = text.slice(-(value.length - 1));
  const head = value.slice(0, min);
  for (let at = window.indexOf(head); at !== -1; at = window.indexOf(head, at + 1)) {
    const tail = window.slice(at);
    if (tail.length >= min && value.startsWith(tail)) return tail.length;
  }
  return 0;
}

/** Replaces the last occurrence of `fragment` (as it appears in the line) with the mark. */
function replaceLast(line: string, fragment: string, json: boolean, mark: string): string {
  const form = json ? jsonForm(fragment) : fragment;
  const at = line.lastIndexOf(form);
  return at === -1 ? line : line.slice(0, at) + mark + line.slice(at + form.length);
}

function replaceFirst(line: string, fragment: string, json: boolean, mark: string): string {
  const form = json ? jsonForm(fragment) : fragment;
  const at = line.indexOf(form);
  return at === -1 ? line : line.slice(0, at) + mark + line.slice(at + form.length);
}

interface Previous extends Line {
  content: { text: string; json: boolean } | null;
}

/**
 * The redaction of a harness's transcript lines in order, including a value split across two consecutive lines
 * of one stream (two plain lines, or two protocol `text` events, which a reader sees joined). Each side of such a
 * split with at least MIN_SPLIT_FRAGMENT characters is replaced; to replace the first side, a line that ends with
 * the start of a value is held back until the next line arrives (or the execution ends), so it is not written
 * before the rest is seen. Values that contain a line break are caught only within one line (a JSON string).
 */
export class SplitLineRedaction {
  private held: Previous | undefined;
  /** The last line released, for a split whose first side was too short to hold its line back. */
  private released: Previous | undefined;

  constructor(private readonly redactor: Redactor) {}

  /** Takes the next line; returns the lines ready to be written, in order. */
  push(stream: Line['stream'], raw: string): Line[] {
    const line = this.redactor.text(raw);
    const current: Previous = { stream, line, content: contentOf(line) };
    const out: Line[] = [];
    const before = this.held ?? this.released;
    if (before && before.stream === stream && before.content && current.content)
      this.redactSplit(before, current, before === this.held);
    if (this.held) {
      out.push({ stream: this.held.stream, line: this.held.line });
      this.released = this.held;
      this.held = undefined;
    }
    if (current.content && this.mayContinue(current.content.text)) this.held = current;
    else {
      out.push({ stream, line: current.line });
      this.released = current;
    }
    return out;
  }

  /** The line held back, if any: the execution ends. */
  end(): Line[] {
    const held = this.held;
    this.held = undefined;
    return held ? [{ stream: held.stream, line: held.line }] : [];
  }

  private mayContinue(text: string): boolean {
    return this.redactor.values.some(({ value }) => endingPrefix(text, value, MIN_SPLIT_FRAGMENT) > 0);
  }

  /** `first` ends with the start of a value and `second` starts with its rest: each long enough side is replaced. */
  private redactSplit(first: Previous, second: Previous, firstWritable: boolean): void {
    const a = first.content!;
    const b = second.content!;
    for (const { name, value } of this.redactor.values) {
      const p = endingPrefix(a.text, value, 1);
      if (p === 0 || !b.text.startsWith(value.slice(p))) continue;
      const mark = redactedMark(name);
      const rest = value.slice(p);
      if (rest.length >= MIN_SPLIT_FRAGMENT) {
        second.line = replaceFirst(second.line, rest, b.json, mark);
        second.content = contentOf(second.line);
      }
      if (firstWritable && p >= MIN_SPLIT_FRAGMENT) {
        first.line = replaceLast(first.line, value.slice(0, p), a.json, mark);
        first.content = contentOf(first.line);
      }
      return;
    }
  }
}
