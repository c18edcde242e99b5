import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { DefinitionError, KeyLines } from './definition-types.js';

/**
 * Reading the YAML of a factory definition (whole .yaml files, or the front matter of .md files) with the line of
 * every key, and typed readers of its values that report what is wrong instead of throwing.
 */

/** A YAML mapping read from one file, with where each key was written. */
export interface YamlMapping {
  file: string;
  values: Record<string, unknown>;
  /** Key paths (`triggers[0].filter.webhook_ids`) -> 1-based line in the original file. */
  lines: KeyLines;
  /** The mapping's first line: where a missing key is reported; null for an empty .yaml file. */
  start: number | null;
}

/** A Markdown file with YAML front matter: the front matter as a mapping, the body trimmed. */
export interface MarkdownFile {
  mapping: YamlMapping;
  body: string;
  /** The line of the closing `---`, where a missing body is reported. */
  closeLine: number;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as it should appear in a message: short, and in YAML terms. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (isRecord(value)) return 'a mapping';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** The parent of a key path: `a.b[0].c` -> `a.b[0]` -> `a.b` -> `a` -> ''. */
function parentPath(path: string): string {
  const last = /(\.[^.[\]]*|\[\d+\])$/.exec(path);
  return last ? path.slice(0, last.index) : '';
}

function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** Records the line of every mapping key and list item under `node`. */
function collectLines(node: unknown, path: string, lines: KeyLines, lineAt: (offset: number) => number): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isScalar(pair.key)) continue;
      const keyPath = joinPath(path, String(pair.key.value));
      if (pair.key.range) lines[keyPath] ??= lineAt(pair.key.range[0]);
      collectLines(pair.value, keyPath, lines, lineAt);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      const itemPath = joinPath(path, index);
      const range = (item as Node | null)?.range;
      if (range) lines[itemPath] ??= lineAt(range[0]);
      collectLines(item, itemPath, lines, lineAt);
    });
  }
}

/** The yaml package appends its own position ("at line 3, column 1:"), which is wrong for front matter. */
function yamlReason(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?\s*$/, '');
}

/**
 * Parses YAML that must be a mapping (or empty). `firstLine` is the line of the file where `text` starts, so that
 * front matter reports lines of the whole file. Returns null after reporting a syntax error or a non-mapping.
 */
export function readYamlMapping(
  file: string,
  text: string,
  errors: DefinitionError[],
  firstLine = 1,
): YamlMapping | null {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const lineAt = (offset: number) => lineCounter.linePos(offset).line + firstLine - 1;
  // Only the first syntax error: the ones after it are usually consequences of it.
  const syntax = doc.errors[0];
  if (syntax) {
    const line = syntax.linePos ? syntax.linePos[0].line + firstLine - 1 : null;
    errors.push({
      file,
      line,
      message: `The YAML is not valid (${yamlReason(syntax.message)}); fix the syntax at this line.`,
    });
    return null;
  }
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { file, values: {}, lines: {}, start: null };
  const start = root.range ? lineAt(root.range[0]) : firstLine;
  if (!isMap(root)) {
    errors.push({
      file,
      line: start,
      message: 'The YAML must be a mapping of keys to values, not a list or a single value.',
    });
    return null;
  }
  let values: unknown;
  try {
    values = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // Unresolved or exploding aliases only fail when the document is converted.
    errors.push({
      file,
      line: start,
      message: `The YAML cannot be read (${(error as Error).message}); remove the offending alias.`,
    });
    return null;
  }
  const lines: KeyLines = {};
  collectLines(root, '', lines, lineAt);
  return { file, values: values as Record<string, unknown>, lines, start };
}

/** Splits YAML front matter between `---` lines from the Markdown body (the same rules as parseSkill). */
export function readMarkdown(file: string, text: string, errors: DefinitionError[]): MarkdownFile | null {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    errors.push({
      file,
      line: 1,
      message:
        'The file must start with YAML front matter: a "---" line, the keys, then another "---" line before the Markdown.',
    });
    return null;
  }
  const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === '---');
  if (end < 0) {
    errors.push({
      file,
      line: 1,
      message: 'The front matter opened on line 1 is never closed; add a "---" line after its keys.',
    });
    return null;
  }
  const mapping = readYamlMapping(file, lines.slice(1, end).join('\n'), errors, 2);
  if (!mapping) return null;
  // Empty front matter: a missing key is reported at the opening `---`.
  return {
    mapping: { ...mapping, start: mapping.start ?? 1 },
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
    closeLine: end + 1,
  };
}

/** Why two spellings are probably the same key: only case or `_` differ (authmode, auth_mode for authMode). */
function looseKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

interface StringRule {
  /** Set when the key must be given: what it holds, for the message when it is missing. */
  required?: string;
  /** The pattern and how to say it in a message. */
  pattern?: { regex: RegExp; expected: string };
  maxLength?: number;
}

/**
 * Typed readers of a mapping's keys. An absent key (or an explicit null) yields the fallback; an invalid value is
 * reported and yields undefined, so callers can tell "not given" from "wrong" and do not report twice.
 */
export class Fields {
  constructor(
    readonly mapping: YamlMapping,
    private readonly errors: DefinitionError[],
  ) {}

  get values(): Record<string, unknown> {
    return this.mapping.values;
  }

  /** The line of a key path, else of its closest written parent, else of the mapping. */
  lineOf(path: string): number | null {
    for (let at = path; at !== ''; at = parentPath(at)) {
      const line = this.mapping.lines[at];
      if (line !== undefined) return line;
    }
    return this.mapping.start;
  }

  fail(path: string, message: string): void {
    this.errors.push({ file: this.mapping.file, line: this.lineOf(path), message });
  }

  given(key: string): boolean {
    return this.values[key] !== undefined && this.values[key] !== null;
  }

  /** Reports every key that is not in `allowed`, suggesting the intended one when only case or `_` differ. */
  allowOnly(allowed: readonly string[], where: string): void {
    for (const key of Object.keys(this.values)) {
      if (allowed.includes(key)) continue;
      const meant = allowed.find((candidate) => looseKey(candidate) === looseKey(key));
      const hint = meant ? `did you mean "${meant}"? Keys are case-sensitive` : `expected one of ${allowed.join(', ')}`;
      this.fail(key, `Unknown key "${key}" in ${where}; ${hint}.`);
    }
  }

  string(key: string, rule: StringRule = {}): string | null | undefined {
    const value = this.values[key];
    if (value === undefined || value === null) {
      if (rule.required) this.fail(key, `${key} is required: ${rule.required}.`);
      return null;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      this.fail(key, `${key} must be a non-empty string, not ${describe(value)}.`);
      return undefined;
    }
    if (rule.pattern && !rule.pattern.regex.test(value)) {
      this.fail(key, `${key} ${describe(value)} is not valid; expected ${rule.pattern.expected}.`);
      return undefined;
    }
    if (rule.maxLength !== undefined && value.length > rule.maxLength) {
      this.fail(key, `${key} is ${value.length} characters long; the limit is ${rule.maxLength}.`);
      return undefined;
    }
    return value;
  }

  boolean(key: string, fallback: boolean): boolean | undefined {
    const value = this.values[key];
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.fail(key, `${key} must be true or false (an unquoted YAML boolean), not ${describe(value)}.`);
    return undefined;
  }

  choice<T extends string>(key: string, choices: readonly T[], fallback: T | null): T | null | undefined {
    const value = this.values[key];
    if (value === undefined || (value === null && fallback === null)) return fallback;
    if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
    this.fail(key, `${key} must be one of ${choices.join(', ')}, not ${describe(value)}.`);
    return undefined;
  }

  /** A list of names; reports a non-list or a non-string item. */
  stringList(key: string): string[] | undefined {
    const value = this.values[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.fail(key, `${key} must be a list of names, not ${describe(value)}.`);
      return undefined;
    }
    const bad = value.findIndex((item) => typeof item !== 'string' || item.trim() === '');
    if (bad >= 0) {
      this.fail(`${key}[${bad}]`, `${key}[${bad}] must be a non-empty string (a name), not ${describe(value[bad])}.`);
      return undefined;
    }
    return value as string[];
  }
}
