import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
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

/** The line that keeps the session the run left in `home`, or undefined when there is none (or it is too big). */
export async function sessionLine(cli: AgentCli, home: string): Promise<string | undefined> {
  const found = await cli.sessions?.find(home).catch(() => undefined);
  if (!found) return undefined;
  const bytes = await fs.promises.readFile(path.join(home, found.file)).catch(() => undefined);
  if (!bytes) return undefined;
  const content = gzipSync(bytes);
  if (content.length > MAX_KEPT_BYTES) return undefined;
  const line: SessionLine = { type: 'hangar_cli_session', harness: cli.name, id: found.id, file: found.file, content: content.toString('base64') };
  return JSON.stringify(line);
}

/**
 * Puts the CLI's session of the latest execution back into `home`, when that execution was this CLI's and kept
 * one; returns what the CLI resumes (undefined: start afresh, with a recap).
 */
export async function restoreSession(cli: AgentCli, history: TranscriptLine[], home: string, workspace: string): Promise<SessionFile | undefined> {
  if (!cli.sessions) return undefined;
  // Only a session written after the latest task started: an execution in between (another harness) would be lost.
  const lastTask = history.findLastIndex((entry) => entry.stream === 'input' && entry.line.startsWith('{"type":"task"'));
  const index = history.findLastIndex((entry) => entry.stream === 'output' && entry.line.startsWith(PREFIX));
  if (index === -1 || index < lastTask) return undefined;
  let saved: SessionLine;
  try {
    saved = JSON.parse(history[index]!.line) as SessionLine;
  } catch {
    return undefined;
  }
  if (saved.harness !== cli.name) return undefined;
  const file = cli.sessions.placeFor(saved, workspace);
  const target = path.join(home, file);
  // The kept path comes from the transcript: it must stay inside HOME.
  if (path.relative(home, target).startsWith('..')) return undefined;
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  await fs.promises.writeFile(target, gunzipSync(Buffer.from(saved.content, 'base64')), { mode: 0o600 });
  return { id: saved.id, file };
}

/** The files under `directory` (relative to it) whose name matches; none when it does not exist. */
export async function filesMatching(directory: string, name: RegExp): Promise<string[]> {
  const entries = await fs.promises.readdir(directory, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((entry) => name.test(path.basename(entry))).sort();
}
