import { type LanguageModel, type ModelMessage, streamText, type ToolSet } from 'ai';
import type { HarnessEvent } from '../../../runs/index.js';
import type { FileOwner } from '../../workspace/files.js';
import { describeWorkspace, systemPrompt } from './prompt.js';
import { createOzTools, DEFAULT_TOOL_LIMITS, type OzToolContext, type OzToolLimits, TOOL_CATEGORIES } from './tools.js';

export type OzFinalEvent = Extract<HarnessEvent, { type: 'done' | 'failed' | 'ask_user' }>;

/**
 * Why the loop was stopped from outside: pass one as the reason to the AbortController behind `signal`, e.g.
 * `controller.abort(new OzStop('The run reached its time limit of 30 minutes', 'budget_exceeded'))`.
 */
export class OzStop extends Error {
  constructor(
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
    this.name = 'OzStop';
  }
}

export interface OzLoopOptions {
  model: LanguageModel;
  workspace: string;
  /** Who owns the files the tools create (the run's user); unset: the server's own user. */
  workspaceOwner?: FileOwner;
  /** The task (the run's prompt, with any follow-ups that came before the start). */
  prompt: string;
  basePrompt?: string | null;
  skillPrompt?: string | null;
  /** The conversation so far, for a continuation: `messages` of an earlier result. The prompt follows it. */
  history?: ModelMessage[];
  /** The environment of shell commands (the harness passes a scrubbed one); process.env when absent. */
  env?: Record<string, string | undefined>;
  /** Model calls allowed (default 50); one more needed ends the loop with `failed`. */
  maxSteps?: number;
  /** Cancel or time limit; an OzStop reason gives the `failed` message and error code. */
  signal?: AbortSignal;
  limits?: Partial<OzToolLimits>;
  /** USD for a step's tokens, added to its `usage` event when known. */
  cost?: (inputTokens: number, outputTokens: number) => number | undefined;
  /** More tools (the run's MCP servers'); the built-in tools keep their names if one clashes. */
  extraTools?: ToolSet;
  /** Runs `run_command`'s commands (the harness gives its sandbox); a plain process group when absent. */
  shell?: OzToolContext['shell'];
  /** Retries of a failed model request (default 2). */
  maxRetries?: number;
  /** Every protocol event, in order: text, tool_call, tool_result, artifact, usage, and one final event. */
  onEvent(event: HarnessEvent): void;
}

export interface OzLoopResult {
  final: OzFinalEvent;
  /** The whole conversation (without the system prompt), to resume it later. */
  messages: ModelMessage[];
  steps: number;
  usage: { input_tokens: number; output_tokens: number };
}

const DEFAULT_MAX_STEPS = 50;
/** Characters of a tool's output kept in its `tool_result` event (the model gets all of it). */
const EVENT_OUTPUT_CHARS = 8000;

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

function eventOutput(output: unknown): unknown {
  const text = JSON.stringify(output) ?? '';
  return text.length > EVENT_OUTPUT_CHARS
    ? `${text.slice(0, EVENT_OUTPUT_CHARS)}… (${text.length - EVENT_OUTPUT_CHARS} more characters)`
    : output;
}

/**
 * Hangar's built-in coding agent: a loop of model calls on the Vercel AI SDK, one step per call, running the
 * tools the model asks for inside the workspace until it answers without a tool call (done), asks the user,
 * runs out of steps, or is stopped. It reports everything as events of the command-harness protocol, so the
 * transcript and conversation machinery treat it like any harness.
 */
export class OzAgentLoop {
  private readonly pending: string[] = [];
  private readonly messages: ModelMessage[];
  private running = false;
  private finished = false;

  constructor(private readonly options: OzLoopOptions) {
    this.messages = [...(options.history ?? []), { role: 'user', content: options.prompt }];
  }

  /**
   * A follow-up from the user while the loop runs; the model sees it before its next step. False once the loop has
   * finished: the message is then for whoever runs next.
   */
  inject(message: string): boolean {
    if (this.finished) return false;
    this.pending.push(message);
    return true;
  }

  /** The conversation so far (a copy). */
  get conversation(): ModelMessage[] {
    return [...this.messages];
  }

  async run(): Promise<OzLoopResult> {
    if (this.running) throw new Error('the oz loop is already running');
    this.running = true;
    const { options } = this;
    const emit = (event: HarnessEvent) => options.onEvent(event);
    const signal = options.signal ?? new AbortController().signal;
    const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
    const usage = { input_tokens: 0, output_tokens: 0 };
    let steps = 0;
    let question: string | null = null;

    const finish = (final: OzFinalEvent): OzLoopResult => {
      this.finished = true;
      emit(final);
      return { final, messages: [...this.messages], steps, usage };
    };
    const stopped = (): OzLoopResult => {
      const reason: unknown = signal.reason;
      if (reason instanceof OzStop)
        return finish({
          type: 'failed',
          message: reason.message,
          ...(reason.errorCode ? { error_code: reason.errorCode } : {}),
        });
      if (reason instanceof Error && reason.name !== 'AbortError')
        return finish({ type: 'failed', message: reason.message });
      return finish({ type: 'failed', message: 'The run was cancelled' });
    };

    const tools: ToolSet = {
      ...options.extraTools,
      ...createOzTools({
        workspace: options.workspace,
        ...(options.workspaceOwner ? { workspaceOwner: options.workspaceOwner } : {}),
        env: options.env ?? process.env,
        limits: { ...DEFAULT_TOOL_LIMITS, ...options.limits },
        emit,
        ask: (text) => {
          question = text;
        },
        signal,
        ...(options.shell ? { shell: options.shell } : {}),
      }),
    };
    const system = systemPrompt({
      basePrompt: options.basePrompt,
      skillPrompt: options.skillPrompt,
      workspaceDescription: await describeWorkspace(options.workspace),
    });

    for (;;) {
      if (signal.aborted) return stopped();
      for (const message of this.pending.splice(0)) this.messages.push({ role: 'user', content: message });
      if (steps >= maxSteps) {
        return finish({
          type: 'failed',
          message: `The agent stopped after ${maxSteps} steps, its step limit, before finishing the task`,
          error_code: 'budget_exceeded',
        });
      }
      steps++;

      const result = streamText({
        model: options.model,
        system,
        messages: this.messages,
        tools,
        abortSignal: signal,
        maxRetries: options.maxRetries ?? 2,
      });
      let text = '';
      let stepText = '';
      let toolCalls = 0;
      let failure: unknown = null;
      const flushText = () => {
        if (text.trim() !== '') emit({ type: 'text', text });
        stepText += text;
        text = '';
      };
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            text += part.text;
            break;
          case 'tool-call':
            flushText();
            toolCalls++;
            emit({
              type: 'tool_call',
              id: part.toolCallId,
              name: part.toolName,
              category: TOOL_CATEGORIES[part.toolName] ?? 'integration',
              input: part.input,
            });
            break;
          case 'tool-result':
            emit({
              type: 'tool_result',
              id: part.toolCallId,
              name: part.toolName,
              status: 'completed',
              output: eventOutput(part.output),
            });
            break;
          case 'tool-error':
            emit({
              type: 'tool_result',
              id: part.toolCallId,
              name: part.toolName,
              status: 'failed',
              output: errorMessage(part.error),
            });
            break;
          case 'finish-step': {
            flushText();
            const input = part.usage.inputTokens ?? 0;
            const output = part.usage.outputTokens ?? 0;
            usage.input_tokens += input;
            usage.output_tokens += output;
            const cost = options.cost?.(input, output);
            emit({
              type: 'usage',
              input_tokens: input,
              output_tokens: output,
              total_tokens: part.usage.totalTokens ?? input + output,
              ...(cost !== undefined ? { inference_cost: cost } : {}),
            });
            break;
          }
          case 'error':
            failure ??= part.error;
            break;
          default:
            break;
        }
      }
      flushText();
      if (signal.aborted) return stopped();
      if (failure !== null)
        return finish({ type: 'failed', message: `The model request failed: ${errorMessage(failure)}` });
      try {
        this.messages.push(...(await result.response).messages);
      } catch (error) {
        if (signal.aborted) return stopped();
        return finish({ type: 'failed', message: `The model request failed: ${errorMessage(error)}` });
      }
      if (question !== null) return finish({ type: 'ask_user', question });
      if (toolCalls === 0 && this.pending.length === 0) {
        const summary = stepText.trim();
        return finish(summary ? { type: 'done', summary: summary.slice(0, 4000) } : { type: 'done' });
      }
    }
  }
}

/** Runs the loop once: `runOzAgent(options)` is `new OzAgentLoop(options).run()`. */
export function runOzAgent(options: OzLoopOptions): Promise<OzLoopResult> {
  return new OzAgentLoop(options).run();
}
