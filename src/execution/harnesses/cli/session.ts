import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type FileOwner, WorkspaceFiles } from '../../workspace/files.js';
import { HOME_DIRECTORY } from '../../workspace/workspace.js';
import type { TranscriptLine } from '../harness.js';
import type { AgentCli, SessionFile } from './agent-cli.js';

/**
 * A CLI's session file kept in the transcript, as one output line after the CLI's own stream: the transcript is
 * what every later execution gets (on any replica or worker), so the session travels with the conversation.
 * Translators and the normalizer read nothing in it.
 */
interface SessionLine extends SessionFile {
  type: 'hangar_cli_session';
  harness: string;
  /** The file, gzipped, in base64. */
  content: string;
}

const PREFIX = '{"type":"hangar_cli_session"';
/** A session bigger than this (compressed) is not kept: the next execution gets a recap instead. */
const MAX_KEPT_BYTES = 8 * 1024 * 1024;
/** A session file bigger than this is not even read (text compresses well; this is far above MAX_KEPT_BYTES's worth). */
const MAX_READ_BYTES = 16 * MAX_KEPT_BYTES;

/**
 * The line that keeps the session the run left in its HOME, or undefined when there is none (or it is too big, or
 * not a plain file: the run controls its HOME, and a link there must not make the server read anything else).
 */
export async function sessionLine(cli: AgentCli, workspace: string): Promise<string | undefined> {
  if (!cli.sessions) return undefined;
  const sessions = cli.sessions;
  const read = async (files: WorkspaceFiles) => {
    const found = await sessions.find(files);
    if (!found) return undefined;
    return {
      found,
      bytes: await files.readFile(path.posix.join(HOME_DIRECTORY, found.file), { maxBytes: MAX_READ_BYTES }),
    };
  };
  const session = await WorkspaceFiles.with(workspace, undefined, read).catch(() => undefined);
  if (!session) return undefined;
  const { found, bytes } = session;
  const content = gzipSync(bytes);
  if (content.length > MAX_KEPT_BYTES) return undefined;
  const line: SessionLine = {
    type: 'hangar_cli_session',
    harness: cli.name,
    id: found.id,
    file: found.file,
    content: content.toString('base64'),
  };
  return JSON.stringify(line);
}

/**
 * Puts the CLI's session of the latest execution back into `home`, when that execution was this CLI's and kept
 * one; returns what the CLI resumes (undefined: start afresh, with a recap).
 */
export async function restoreSession(
  cli: AgentCli,
  history: TranscriptLine[],
  workspace: string,
  owner?: FileOwner,
): Promise<SessionFile | undefined> {
  if (!cli.sessions) return undefined;
  // Only a session written after the latest task started: an execution in between (another harness) would be lost.
  const lastTask = history.findLastIndex(
    (entry) => entry.stream === 'input' && entry.line.startsWith('{"type":"task"'),
  );
  const index = history.findLastIndex((entry) => entry.stream === 'output' && entry.line.startsWith(PREFIX));
  if (index === -1 || index < lastTask) return undefined;
  let saved: SessionLine;
  try {
    saved = JSON.parse(history[index]!.line) as SessionLine;
  } catch {
    return undefined;
  }
  if (saved.harness !== cli.name) return undefined;
  const file = path.posix.normalize(cli.sessions.placeFor(saved, workspace));
  // The kept path comes from the transcript: it must stay inside HOME.
  if (file.startsWith('..') || path.isAbsolute(file)) return undefined;
  const content = gunzipSync(Buffer.from(saved.content, 'base64'));
  await WorkspaceFiles.with(workspace, owner, (files) =>
    files.writeFile(path.posix.join(HOME_DIRECTORY, file), content),
  );
  return { id: saved.id, file };
}

/**
 * The files under `directory` of HOME (relative to it, `/`-separated) whose name matches; none when it does not
 * exist or is not a plain directory. Links are not followed.
 */
export async function filesMatching(workspace: WorkspaceFiles, directory: string, name: RegExp): Promise<string[]> {
  const found: string[] = [];
  try {
    for await (const entry of workspace.walk(path.posix.join(HOME_DIRECTORY, directory))) {
      if (!entry.directory && name.test(path.posix.basename(entry.path)))
        found.push(path.posix.relative(directory, entry.path.slice(HOME_DIRECTORY.length + 1)));
    }
  } catch {
    return [];
  }
  return found.sort();
}
