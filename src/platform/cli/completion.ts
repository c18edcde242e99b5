import type { Command } from 'commander';
import { choicesOf } from './options.js';

/**
 * `hangar completion bash|zsh|fish`: a completion script made from the command tree itself, so it always knows
 * every verb and option of this version. Verbs complete at each level, options after a "-", and values: those of
 * enum options and arguments (written into the script, in lower case, as the CLI takes any case), and the IDs of
 * the team's recent runs and its environments where a verb takes one. Only IDs start a process
 * (`hangar __complete runs|environments`, one request); the rest is in the script.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What `hangar __complete <kind>` lists: the IDs a value of this kind can take. */
export const ID_KINDS = ['runs', 'environments'] as const;
export type IdKind = (typeof ID_KINDS)[number];

/** A verb's first argument, as the scripts name its slot beside the options' flags. */
const ARGUMENT = '<arg>';

interface Node {
  path: string;
  subcommands: string[];
  options: string[];
  description: string;
  /** By flag (or ARGUMENT): the values it takes, lower case. */
  values: Map<string, string[]>;
  /** By flag (or ARGUMENT): the kind of ID it takes. */
  ids: Map<string, IdKind>;
}

/** The IDs a value stands for, by the name its help gives it (`<run_id>`, `<environment_id>`, an environment's `<uid>`). */
function idKind(valueName: string | undefined, path: string[]): IdKind | undefined {
  if (valueName === 'run_id') return 'runs';
  if (valueName === 'environment_id' || (valueName === 'uid' && path[0] === 'environments')) return 'environments';
  return undefined;
}

function walk(command: Command, path: string[], nodes: Node[]): void {
  const visible = command.commands.filter((sub) => sub.name() !== 'help' && !sub.name().startsWith('__'));
  const values = new Map<string, string[]>();
  const ids = new Map<string, IdKind>();
  const slot = (flags: string[], parser: unknown, valueName: string | undefined) => {
    const choices = choicesOf(parser);
    const kind = idKind(valueName, path);
    for (const flag of flags) {
      if (choices)
        values.set(
          flag,
          choices.map((choice) => choice.toLowerCase()),
        );
      else if (kind) ids.set(flag, kind);
    }
  };
  for (const option of command.options) {
    if (!option.required && !option.optional) continue; // a switch takes no value
    const flags = [option.long, option.short].filter((flag): flag is string => Boolean(flag));
    slot(flags, option.parseArg, /<([\w-]+)>|\[([\w-]+)\]/.exec(option.flags)?.slice(1).find(Boolean));
  }
  const [argument] = command.registeredArguments;
  if (argument) slot([ARGUMENT], argument.parseArg, argument.name());
  nodes.push({
    path: path.join(' '),
    subcommands: visible.map((sub) => sub.name()),
    options: [...command.options.flatMap((option) => [option.long, option.short]), '--help'].filter(
      (flag): flag is string => Boolean(flag),
    ),
    description: command.description(),
    values,
    ids,
  });
  for (const sub of visible) walk(sub, [...path, sub.name()], nodes);
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** Bash's associative arrays take no empty key: the top level is "hangar", a verb "hangar runs list". */
const key = (path: string) => (path ? `hangar ${path}` : 'hangar');

function bash(nodes: Node[]): string {
  const entries = (pick: (node: Node) => string[]) =>
    nodes.map((node) => `  [${quote(key(node.path))}]=${quote(pick(node).join(' '))}`).join('\n');
  const slots = (pick: (node: Node) => Map<string, string>) =>
    nodes
      .flatMap((node) =>
        [...pick(node)].map(([flag, text]) => `  [${quote(`${key(node.path)} ${flag}`)}]=${quote(text)}`),
      )
      .join('\n');
  return `# hangar completion for bash: add  eval "$(hangar completion bash)"  to ~/.bashrc
declare -gA _hangar_subcommands=(
${entries((node) => node.subcommands)}
)
declare -gA _hangar_options=(
${entries((node) => node.options)}
)
declare -gA _hangar_values=(
${slots((node) => new Map([...node.values].map(([flag, values]) => [flag, values.join(' ')])))}
)
declare -gA _hangar_ids=(
${slots((node) => node.ids)}
)
# Completes the value of a slot ("<verb path> <flag>" or "<verb path> ${ARGUMENT}"); fails when it takes none known.
_hangar_value() {
  local values
  if [[ -n "\${_hangar_values[$1]+set}" ]]; then values="\${_hangar_values[$1]}"
  elif [[ -n "\${_hangar_ids[$1]+set}" ]]; then values="$(hangar __complete "\${_hangar_ids[$1]}" 2>/dev/null)"
  else return 1; fi
  COMPREPLY=($(compgen -W "$values" -- "$cur"))
}
_hangar() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD - 1]}" path="hangar" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    # A word is a verb only where the tree has it; anything else is an argument or an option's value.
    if [[ " \${_hangar_subcommands[$path]} " == *" $word "* ]]; then path="$path $word"; fi
  done
  if [[ "$cur" != -* && "$prev" == -* ]] && _hangar_value "$path $prev"; then return; fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "\${_hangar_options[$path]}" -- "$cur"))
  elif [[ -n "\${_hangar_subcommands[$path]}" ]]; then
    COMPREPLY=($(compgen -W "\${_hangar_subcommands[$path]}" -- "$cur"))
  else
    _hangar_value "$path ${ARGUMENT}"
  fi
}
complete -o default -F _hangar hangar
`;
}

function zsh(nodes: Node[]): string {
  // zsh runs the bash script through its bash-completion layer, which every zsh has.
  return `# hangar completion for zsh: add  eval "$(hangar completion zsh)"  to ~/.zshrc
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).split('\n').slice(1).join('\n')}`;
}

function fish(nodes: Node[]): string {
  const lines = [
    '# hangar completion for fish: hangar completion fish > ~/.config/fish/completions/hangar.fish',
    'function __hangar_path',
    '  set -l words (commandline -opc)',
    '  set -e words[1]',
    '  set -l path ""',
    '  for word in $words',
    '    set -l subs (__hangar_subcommands "$path")',
    '    if contains -- $word $subs',
    '      set path (string trim -- "$path $word")',
    '    end',
    '  end',
    '  echo $path',
    'end',
    'function __hangar_subcommands',
    '  switch "$argv[1]"',
    ...nodes
      .filter((node) => node.subcommands.length > 0)
      .flatMap((node) => [`    case ${quote(node.path)}`, `      printf '%s\\n' ${node.subcommands.join(' ')}`]),
    '  end',
    'end',
    'complete -c hangar -f',
  ];
  for (const node of nodes) {
    const condition = `test (__hangar_path) = ${quote(node.path)}`;
    for (const sub of node.subcommands) {
      const child = nodes.find((other) => other.path === (node.path ? `${node.path} ${sub}` : sub));
      lines.push(
        `complete -c hangar -n ${quote(condition)} -a ${quote(sub)} -d ${quote(child?.description.slice(0, 60) ?? '')}`,
      );
    }
    const valuesOf = (flag: string) => {
      const values = node.values.get(flag);
      const ids = node.ids.get(flag);
      if (values) return quote(values.join(' '));
      return ids ? quote(`(hangar __complete ${ids} 2>/dev/null)`) : undefined;
    };
    for (const option of node.options.filter((flag) => flag.startsWith('--'))) {
      const values = valuesOf(option);
      lines.push(
        `complete -c hangar -n ${quote(condition)} -l ${quote(option.slice(2))}${values ? ` -x -a ${values}` : ''}`,
      );
    }
    const argument = valuesOf(ARGUMENT);
    if (argument && node.subcommands.length === 0)
      lines.push(`complete -c hangar -n ${quote(condition)} -a ${argument}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes: Node[] = [];
  walk(program, [], nodes);
  return { bash, zsh, fish }[shell](nodes);
}
