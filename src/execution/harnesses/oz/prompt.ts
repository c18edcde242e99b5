import { WorkspaceFiles } from '../../workspace/files.js';

const AGENT_PROMPT = `You are oz, the coding agent built into Hangar. You work autonomously on the task you are given, inside a workspace directory, using your tools. Investigate before changing things, make the change, and check it (run the tests or the build when there are any). Keep going until the task is done, then finish with a short summary of what you did as plain text, without calling a tool.`;

const TOOLS_PROMPT = `Tools:
- run_command: run a shell command in the workspace (it is killed after a timeout; long output is cut).
- read_file, write_file, edit_file (exact, unique string replacement), list_files, search_files: work with files. Paths are relative to the workspace root and cannot leave it.
- report_artifact: report a pull request you opened (url, branch), a file worth keeping (path), a plan (title, content), or an external link (url).
- ask_user: ask the user a question when you cannot go on without them; your work pauses until they answer.`;

/** A short description of the workspace for the system prompt: whether it is a git repository and what is at its root. */
export async function describeWorkspace(workspace: string): Promise<string> {
  const { entries, head } = await WorkspaceFiles.with(workspace, undefined, async (files) => ({
    entries: await files.list('').catch(() => []),
    head: await files.readFile('.git/HEAD', { maxBytes: 4096 }).catch(() => undefined),
  }));
  const names = entries
    .filter((entry) => entry.name !== '.git')
    .map((entry) => entry.name + (entry.isDirectory() ? '/' : ''))
    .sort();
  const shown = names.slice(0, 40).join(', ') + (names.length > 40 ? `, and ${names.length - 40} more` : '');
  let git = 'It is not a git repository.';
  // No HEAD file: not a repository (or a worktree; the model can ask git).
  if (head) {
    const ref = head.toString('utf8').trim();
    git = ref.startsWith('ref: refs/heads/')
      ? `It is a git repository on branch ${ref.slice('ref: refs/heads/'.length)}.`
      : 'It is a git repository (detached HEAD).';
  }
  return `The workspace is ${workspace}. ${git} At its root: ${shown || '(empty)'}.`;
}

/** The system prompt: the operator's or agent's base prompt first, then how oz works, the workspace and the tools. */
export function systemPrompt(parts: {
  basePrompt?: string | null;
  skillPrompt?: string | null;
  workspaceDescription: string;
}): string {
  return [parts.basePrompt?.trim(), AGENT_PROMPT, parts.skillPrompt?.trim(), parts.workspaceDescription, TOOLS_PROMPT]
    .filter((part): part is string => !!part)
    .join('\n\n');
}
