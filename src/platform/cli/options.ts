import { type Command, InvalidArgumentError } from 'commander';

/** Repeatable options: `--meta a=1 --meta b=2`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * An option that takes one of `values`, in any case (`--state queued` is QUEUED): the value is sent in the case
 * the API uses, and a value that is none of them is refused with the list.
 */
export function oneOf<T extends string>(option: string, values: readonly T[]): ((value: string) => T) & Choices {
  const parse = (value: string) => {
    const found = values.find((allowed) => allowed.toLowerCase() === value.trim().toLowerCase());
    if (found === undefined)
      throw new InvalidArgumentError(`${option} takes one of ${values.join(', ')}; got "${value}"`);
    return found;
  };
  return Object.assign(parse, { choices: values });
}

/** `oneOf` for a repeatable option. */
export function someOf<T extends string>(
  option: string,
  values: readonly T[],
): ((value: string, previous?: T[]) => T[]) & Choices {
  const parse = oneOf(option, values);
  return Object.assign((value: string, previous: T[] = []) => [...previous, parse(value)], { choices: values });
}

/** The values an option's parser takes, which shell completion offers (completion.ts). */
export interface Choices {
  choices: readonly string[];
}

export function choicesOf(parser: unknown): readonly string[] | undefined {
  const choices = typeof parser === 'function' ? (parser as unknown as Partial<Choices>).choices : undefined;
  return Array.isArray(choices) ? choices : undefined;
}

/** `key=value` pairs of a repeatable option, as an object. */
export function pairs(option: string, values: string[]): Record<string, string> {
  return Object.fromEntries(
    values.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new InvalidArgumentError(`${option} takes key=value, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** Examples under a verb's `--help`: a few real command lines, each with what it does. */
export function examples(command: Command, lines: Array<[string, string]>): Command {
  const width = Math.max(...lines.map(([line]) => line.length));
  const text = lines.map(([line, what]) => `  $ ${line.padEnd(width)}  # ${what}`).join('\n');
  return command.addHelpText('after', `\nExamples:\n${text}\n`);
}
