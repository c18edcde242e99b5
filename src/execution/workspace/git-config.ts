import { runReadableFile } from '../sandbox/run-readable-file.js';

/**
 * The git configuration a clone runs with as the run user: `safe.directory = *`. The source is the operator's
 * HANGAR_GIT_BASE_URL; a local one (`file:`) belongs to another user than the run user, and git refuses to read a
 * repository of another owner. Command-line config (`-c`, GIT_CONFIG_COUNT) does not reach the upload-pack of a
 * local clone (git clears it for local transports), so it has to be a file.
 */
export function cloneGitConfig(): string {
  return runReadableFile('gitconfig', '[safe]\n\tdirectory = *\n');
}

/**
 * A shared environment's setup is its owning team's code, and it ran in the workspace a guest team's agent then
 * works in (issue 47.6). git runs commands its configuration names on its own (`git status` runs core.fsmonitor, a
 * commit runs hooks, a diff runs a textconv driver, a fetch runs core.sshCommand), so in a guest's run the
 * configuration setup wrote must not reach the agent's git. Two layers do it:
 *
 * - GUEST_GIT_CLEANUP, run in the sandbox between setup and the agent, removes every command-running key from the
 *   configuration files setup could write: the global ones (copied, cleaned, into GUEST_GLOBAL_CONFIG, which the
 *   agent's git reads instead: what setup put there that runs nothing, such as user.name, stays) and each of the
 *   environment's clones' own (in place: `.git/config`, and `config.worktree`).
 * - guestGitEnvironment: GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL, and GIT_CONFIG_COUNT entries, which git reads after
 *   every file (system, global, repository), so that they win over whatever a repository anywhere in the workspace
 *   says for the keys with a fixed name (drivers have names setup chooses: only the cleanup reaches them).
 */

/** The agent's global git configuration in a guest's run, relative to its HOME (written by GUEST_GIT_CLEANUP). */
export const GUEST_GLOBAL_CONFIG = '.gitconfig-hangar-guest';

/**
 * What GUEST_GIT_CLEANUP removes: `case` patterns over `git config --list --name-only` names (section and key in
 * lower case, a subsection as written). Every key whose value git runs as a command, or that makes git read another
 * file (includes) or call a helper.
 */
const COMMAND_KEYS = [
  'core.fsmonitor',
  'core.hookspath',
  'core.sshcommand',
  'core.pager',
  'core.editor',
  'core.askpass',
  'core.gitproxy',
  'core.alternaterefscommand',
  'sequence.editor',
  'diff.external',
  'diff.*.command',
  'diff.*.textconv',
  'merge.*.driver',
  'remote.*.uploadpack',
  'remote.*.receivepack',
  'remote.*.vcs',
  'submodule.*.update',
  'pager.*',
  'alias.*',
  'include.*',
  'includeif.*',
  'credential.*',
  'filter.*',
  'gpg.*',
  'difftool.*',
  'mergetool.*',
  'sendemail.*',
  'trace2.*',
  'protocol.*',
  'uploadpack.*',
];

/**
 * The cleanup, as `sh -c GUEST_GIT_CLEANUP sh <repository directory>...`, in the run's sandbox with
 * guestGitEnvironment's variables (its own git runs nothing setup named). It fails (exit 1) when it cannot clean a
 * file it found: the run then does not start.
 */
export const GUEST_GIT_CLEANUP = [
  'set -u',
  `clean() { git config --file "$1" --name-only --list 2>/dev/null | while IFS= read -r key; do case "$key" in ${COMMAND_KEYS.join('|')}) git config --file "$1" --unset-all "$key" || exit 1 ;; esac; done; }`,
  // The global files, as git would read them (the XDG one first, so that ~/.gitconfig wins), into a fresh file.
  `target="$HOME/${GUEST_GLOBAL_CONFIG}"`,
  'rm -rf -- "$target" || exit 1',
  'for file in "$HOME/.config/git/config" "$HOME/.gitconfig"; do if [ -f "$file" ]; then cat -- "$file" >> "$target" || exit 1; printf "\\n" >> "$target"; fi; done',
  'touch -- "$target" && clean "$target" || exit 1',
  // Each clone's own configuration, wherever its .git says its directory is.
  'for repo in "$@"; do',
  '  [ -e "$repo/.git" ] || continue',
  // Made absolute with cd and pwd rather than rev-parse's --path-format: an image's git may be older than 2.31.
  '  common=$(cd -- "$repo" && dir=$(git rev-parse --git-common-dir 2>/dev/null) && cd -- "$dir" && pwd -P) || continue',
  '  own=$(cd -- "$repo" && dir=$(git rev-parse --git-dir 2>/dev/null) && cd -- "$dir" && pwd -P) || continue',
  '  for file in "$common/config" "$common/config.worktree" "$own/config.worktree"; do',
  '    if [ -f "$file" ]; then clean "$file" || exit 1; fi',
  '  done',
  'done',
].join('\n');

/**
 * Keys with a fixed name set for every git of the agent, whatever a repository's own configuration says (command-line
 * scope, read last). An empty credential.helper drops the helpers read before it; the run's own (its GitHub
 * credentials) come after.
 */
const OVERRIDES: Array<[string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.askPass', ''],
  // An editor git cannot start fails the command instead of hanging an agent without a terminal.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's expansion, run by git
  ['core.editor', '${VISUAL:-${EDITOR:-false}}'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's expansion, run by git
  ['sequence.editor', '${GIT_EDITOR:-${VISUAL:-${EDITOR:-false}}}'],
  ['credential.helper', ''],
  ['gpg.program', 'gpg'],
  ['gpg.ssh.program', 'ssh-keygen'],
  ['gpg.x509.program', 'gpgsm'],
  ['protocol.ext.allow', 'never'],
  ['remote.origin.uploadpack', 'git-upload-pack'],
  ['remote.origin.receivepack', 'git-receive-pack'],
];

/**
 * The agent's environment in a guest's run: `env` with git pointed at the cleaned global configuration (`home` is
 * the agent's HOME), no system configuration, the overrides first among the GIT_CONFIG_COUNT entries (those `env`
 * already has, such as the GitHub credential helper, follow them), and the commands git takes from variables
 * before any configuration (pager, ssh, proxy) set to plain ones.
 */
export function guestGitEnvironment(env: Record<string, string>, home: string): Record<string, string> {
  const existing = Number(env.GIT_CONFIG_COUNT ?? '0');
  const entries: Array<[string, string]> = [...OVERRIDES];
  for (let index = 0; Number.isInteger(existing) && index < existing; index++)
    entries.push([env[`GIT_CONFIG_KEY_${index}`] ?? '', env[`GIT_CONFIG_VALUE_${index}`] ?? '']);
  const result: Record<string, string> = {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: `${home}/${GUEST_GLOBAL_CONFIG}`,
    GIT_PAGER: 'cat',
    // ~/.ssh/config is setup's too (a ProxyCommand runs on every fetch over ssh).
    GIT_SSH_COMMAND: 'ssh -F /dev/null',
    GIT_PROXY_COMMAND: '',
    GIT_CONFIG_COUNT: String(entries.length),
  };
  entries.forEach(([key, value], index) => {
    result[`GIT_CONFIG_KEY_${index}`] = key;
    result[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return result;
}
