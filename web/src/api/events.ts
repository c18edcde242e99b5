// Live events of a run: `GET /agent/runs/{id}/events` is Server-Sent Events, read with fetch (EventSource cannot
// send the Authorization header) and parsed with eventsource-parser. Reconnects with Last-Event-ID until `end`.
import { createParser } from 'eventsource-parser';
import { ApiProblem, type HangarClient, seg } from './client';
import type { TimelineEvent } from './types';

export interface OutputEvent {
  execution_id: string | number;
  line: string;
  event: ({ type: string } & Record<string, unknown>) | null;
}

export interface RunEventHandlers {
  onTimeline(event: TimelineEvent): void;
  onOutput(event: OutputEvent): void;
  onEnd(state: string): void;
  /** The stream could not be opened for good (unknown run, key refused): following stops. */
  onError(error: ApiProblem): void;
  /** Connected (true) or waiting to reconnect (false). */
  onConnection?(connected: boolean): void;
}

/** Follows a run's events until it ends or `stop()` is called. */
export function followRunEvents(client: HangarClient, runId: string, handlers: RunEventHandlers): { stop(): void } {
  const abort = new AbortController();
  let lastEventId: string | undefined;
  let retryMs = 2000;
  let ended = false;

  const parser = createParser({
    onEvent(message) {
      if (message.id) lastEventId = message.id;
      let data: unknown;
      try {
        data = JSON.parse(message.data);
      } catch {
        return;
      }
      if (message.event === 'timeline') handlers.onTimeline(data as TimelineEvent);
      else if (message.event === 'output') handlers.onOutput(data as OutputEvent);
      else if (message.event === 'end') {
        ended = true;
        handlers.onEnd((data as { state: string }).state);
      }
    },
    onRetry(ms) {
      retryMs = ms;
    },
  });

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });

  void (async () => {
    while (!ended && !abort.signal.aborted) {
      try {
        const response = await client.send('GET', `/agent/runs/${seg(runId)}/events`, {
          signal: abort.signal,
          headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        });
        handlers.onConnection?.(true);
        parser.reset();
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        // A refusal (4xx) will not change by retrying; a network error or a 5xx may.
        if (error instanceof ApiProblem && error.status >= 400 && error.status < 500) {
          handlers.onError(error);
          return;
        }
      }
      if (ended || abort.signal.aborted) return;
      handlers.onConnection?.(false);
      await wait(retryMs);
    }
  })();

  return { stop: () => abort.abort() };
}
