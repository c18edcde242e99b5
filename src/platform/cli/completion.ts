import type { Command } from 'commander';

/**
 * `hangar completion bash|zsh|fish`: a completion script made from the command tree itself, so it always knows
 * every verb and option of this version. Verbs complete at each level and options after a "-"; the tree is
 * written into the script, so a tab press starts no process.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  path: string;
  subcommands: string[];
  options: string[];
  description: string;
}

function walk(command: Command, path: string[], nodes: Node[]): void {
  const visible = command.commands.filter((sub) => sub.name() !== 'help');
  nodes.push({
    path: path.join(' '),
    subcommands: visible.map((sub) => sub.name()),
    options: [...command.options.flatMap((option) => [option.long, option.short]), '--help'].filter(
      (flag): flag is string => Boolean(flag),
    ),
    description: command.description(),
  });
  for (const sub of visible) walk(sub, [...path, sub.name()], nodes);
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** Bash's associative arrays take no empty key: the top level is "hangar", a verb "hangar runs list". */
const key = (path: string) => (path ? `hangar ${path}` : 'hangar');

function bash(nodes: Node[]): string {
  const entries = (pick: (node: Node) => string[]) =>
    nodes.map((node) => `  [${quote(key(node.path))}]=${quote(pick(node).join(' '))}`).join('\n');
  return `# hangar completion for bash: add  eval "$(hangar completion bash)"  to ~/.bashrc
declare -gA _hangar_subcommands=(
${entries((node) => node.subcommands)}
)
declare -gA _hangar_options=(
${entries((node) => node.options)}
)
_hangar() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="hangar" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    # A word is a verb only where the tree has it; anything else is an argument or an option's value.
    if [[ " \${_hangar_subcommands[$path]} " == *" $word "* ]]; then path="$path $word"; fi
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "\${_hangar_options[$path]}" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "\${_hangar_subcommands[$path]}" -- "$cur"))
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
    for (const option of node.options.filter((flag) => flag.startsWith('--')))
      lines.push(`complete -c hangar -n ${quote(condition)} -l ${quote(option.slice(2))}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes: Node[] = [];
  walk(program, [], nodes);
  return { bash, zsh, fish }[shell](nodes);
}
