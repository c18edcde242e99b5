import { setTimeout as sleep } from 'node:timers/promises';
import { type ToolSet, tool } from 'ai';
import { z } from 'zod';

/**
 * The oz agent's orchestration tools: messages to and from the other runs of its tree (its parent, its children),
 * over Hangar's own messaging API with the run's task token, so the agent reaches exactly what that token reaches.
 * A parent hands work to a child with `send_message` and takes its answer with `wait_for_messages`.
 */

export interface MessagingContext {
  apiUrl: string;
  taskToken: string;
  runId: string;
  signal: AbortSignal;
}

/** How often an idle wait asks for new messages. */
const POLL_MS = 500;
const MAX_WAIT_SECONDS = 3600;

export function messagingTools(context: MessagingContext): ToolSet {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${context.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${context.taskToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: context.signal,
    });
    const answer = await response.json().catch(() => undefined);
    if (!response.ok)
      throw new Error(`${method} ${path}: ${response.status} ${(answer as { detail?: string })?.detail ?? ''}`.trim());
    return answer;
  };
  const inbox = `/agent/messages/${encodeURIComponent(context.runId)}`;
  return {
    send_message: tool({
      description:
        'Sends a message to other runs of your tree (your parent run, or child runs you orchestrate), by run ID. Answers the message IDs.',
      inputSchema: z.object({
        to: z.array(z.string().min(1)).min(1).max(20),
        subject: z.string().max(500),
        body: z.string().max(64 * 1024),
      }),
      execute: async ({ to, subject, body }) =>
        call('POST', '/agent/messages', { to, subject, body, sender_run_id: context.runId }),
    }),
    wait_for_messages: tool({
      description:
        'Waits until messages for this run arrive (from your parent or your child runs), then returns them whole and marks them read. Waits at most timeout_seconds (default 600).',
      inputSchema: z.object({ timeout_seconds: z.number().int().positive().max(MAX_WAIT_SECONDS).optional() }),
      execute: async ({ timeout_seconds }) => {
        const until = Date.now() + (timeout_seconds ?? 600) * 1000;
        for (;;) {
          const headers = (await call('GET', `${inbox}?unread=true&limit=20`)) as Array<{ message_id: string }>;
          if (headers.length > 0) {
            const messages = [];
            for (const header of headers)
              messages.push(await call('GET', `/agent/messages/${encodeURIComponent(header.message_id)}/read`));
            return { messages };
          }
          if (Date.now() >= until) return { messages: [], note: 'No message arrived in time.' };
          await sleep(POLL_MS, undefined, { signal: context.signal });
        }
      },
    }),
  };
}

/** The tools, when the execution was given its API address and task token (every execution is). */
export function messagingToolsFor(env: Record<string, string | undefined>, signal: AbortSignal): ToolSet | undefined {
  const { HANGAR_API_URL: apiUrl, HANGAR_TASK_TOKEN: taskToken, HANGAR_RUN_ID: runId } = env;
  if (!apiUrl || !taskToken || !runId) return undefined;
  return messagingTools({ apiUrl, taskToken, runId, signal });
}
