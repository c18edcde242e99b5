import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { ARTIFACT_TYPES } from './artifact-types.js';

/**
 * The JSON Lines event protocol a harness writes on stdout, one object per line. Lines that are not one of these
 * events are kept in the transcript but carry no meaning. docs/harnesses.md documents it for operators.
 */
const Text = Type.Object({
  type: Type.Literal('text'),
  text: Type.String(),
  /** A streamed piece of the text event before it: joined to it with no break (separate texts stay apart). */
  delta: Type.Optional(Type.Boolean()),
});
const ToolCall = Type.Object({
  type: Type.Literal('tool_call'),
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  category: Type.Optional(Type.String()),
  input: Type.Optional(Type.Unknown()),
});
const ToolResult = Type.Object({
  type: Type.Literal('tool_result'),
  id: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.String()),
  status: Type.Optional(Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('denied')])),
  output: Type.Optional(Type.Unknown()),
});
const Artifact = Type.Object({
  type: Type.Literal('artifact'),
  artifact_type: Type.Union(ARTIFACT_TYPES.map((value) => Type.Literal(value))),
  data: Type.Record(Type.String(), Type.Unknown()),
  visibility: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('public')])),
});
const Usage = Type.Object({
  type: Type.Literal('usage'),
  input_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  output_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  total_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  inference_cost: Type.Optional(Type.Number({ minimum: 0 })),
});
const AskUser = Type.Object({ type: Type.Literal('ask_user'), question: Type.String() });
const Progress = Type.Object({
  type: Type.Literal('progress'),
  message: Type.String({ maxLength: 2000 }),
  percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
});
const Done = Type.Object({ type: Type.Literal('done'), summary: Type.Optional(Type.String()) });
const Failed = Type.Object({
  type: Type.Literal('failed'),
  message: Type.String(),
  error_code: Type.Optional(Type.String()),
});

const HarnessEvent = Type.Union([Text, ToolCall, ToolResult, Artifact, Usage, Progress, AskUser, Done, Failed]);
export type HarnessEvent = Static<typeof HarnessEvent>;

const check = Compile(HarnessEvent);

/** The event on a line of harness output, or null for anything else (log lines, unknown or malformed events). */
export function parseEvent(line: string): HarnessEvent | null {
  if (!line.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  return check.Check(value) ? (value as HarnessEvent) : null;
}

/** The events on a line of the protocol itself: its one event, or none. */
export function protocolEvents(line: string): HarnessEvent[] {
  const event = parseEvent(line);
  return event ? [event] : [];
}

/** What the task line says of an execution (execution's HarnessTask extends it with where and how to work). */
export interface TaskOfExecution {
  runId: string;
  executionId: number;
  /** `agent` is the run's own agent; `debug` starts in a workspace kept after a failed environment setup. */
  kind: 'agent' | 'debug';
  conversationId: string;
  prompt: string;
  basePrompt: string | null;
  /** Follow-up messages that joined this execution before it started, oldest first. */
  followups: string[];
  history: Array<{ executionId: number; stream: 'input' | 'output'; line: string }>;
  agentConfig: Record<string, unknown>;
}

/** The first line a harness reads on stdin. */
export interface TaskMessage {
  type: 'task';
  run_id: string;
  execution_id: number;
  kind: 'agent' | 'debug';
  conversation_id: string;
  prompt: string;
  base_prompt: string | null;
  followups: string[];
  /** Earlier executions of the conversation, as `{execution_id, stream, line}` (stream `input` or `output`). */
  history: Array<{ execution_id: number; stream: 'input' | 'output'; line: string }>;
  agent_config: Record<string, unknown>;
}

/** The task line of an execution: what a command harness reads first, and what every harness's transcript starts with. */
export function taskMessage(task: TaskOfExecution): TaskMessage {
  return {
    type: 'task',
    run_id: task.runId,
    execution_id: task.executionId,
    kind: task.kind,
    conversation_id: task.conversationId,
    prompt: task.prompt,
    base_prompt: task.basePrompt,
    followups: task.followups,
    history: task.history.map((entry) => ({ execution_id: entry.executionId, stream: entry.stream, line: entry.line })),
    agent_config: task.agentConfig,
  };
}

type Spoken = Pick<TaskOfExecution, 'executionId' | 'kind' | 'prompt' | 'followups'>;

/**
 * What the user says to an execution: the run's prompt in its first execution only (a new run joining a
 * conversation says its own; a debug turn says its own too), then the follow-ups.
 */
function spokenIn(task: Spoken): string[] {
  const opensRun = task.executionId === 1 || task.kind === 'debug';
  return [...(opensRun ? [task.prompt] : []), ...task.followups];
}

/** What the user says to an execution (see spokenIn), without blank messages: what a harness is told. */
export function saidNow(task: Spoken): string[] {
  return spokenIn(task).filter((text) => text.trim() !== '');
}

/**
 * An input line of a transcript read back: its kind (for a task line) and what the user said on it, by the rule
 * of `saidNow` (blank messages kept). Null for a line that is not a task or a user message.
 */
export function inputLine(line: string): { kind?: 'agent' | 'debug'; said: string[] } | null {
  let value: (Partial<TaskMessage> & { text?: unknown }) | null;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (value?.type === 'task') {
    const followups = Array.isArray(value.followups)
      ? value.followups.filter((text): text is string => typeof text === 'string')
      : [];
    const said = spokenIn({
      executionId: value.execution_id ?? 0,
      kind: value.kind ?? 'agent',
      prompt: typeof value.prompt === 'string' ? value.prompt : '',
      followups,
    });
    return { kind: value.kind, said };
  }
  if (value?.type === 'user_message' && typeof value.text === 'string') return { said: [value.text] };
  return null;
}

/** Later lines on stdin, for harnesses that accept input while running. */
export interface UserMessage {
  type: 'user_message';
  text: string;
}
