// A run's live events (timeline and plain output) followed over the events stream, with the state of the connection.
import { useCallback, useEffect, useRef, useState } from 'react';
import { followRunEvents } from '../api/events';
import type { TimelineEvent } from '../api/types';
import { useClient } from '../session';

export type Live = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'failed';

export const LIVE_LABELS: Record<Live, string> = {
  connecting: 'Connecting to live updates…',
  live: 'Live: updates as the run goes',
  reconnecting: 'Connection lost, reconnecting…',
  ended: 'The run has ended',
  failed: 'Live updates unavailable',
};

/** The plain output lines kept: a harness that writes text can write a lot. */
const OUTPUT_LINES = 500;

/** Calls `work` at most once per `ms`, after the last trigger in a burst too. */
export function useThrottle(work: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(work);
  latest.current = work;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  }, [ms]);
}

export interface RunFollow {
  events: TimelineEvent[];
  output: string[];
  live: Live;
  liveError: unknown;
  /** Follows the events again: a follow-up restarted a run whose stream had ended. */
  restart(): void;
}

/**
 * Follows `runId`'s events; `onTimeline` and `onOutput` are told of each new one (throttled reloads of the run and
 * its conversation), `onEnd` when the run has ended. The callbacks may change from render to render.
 */
export function useRunFollow(
  runId: string,
  callbacks: { onTimeline(): void; onOutput(): void; onEnd(): void },
): RunFollow {
  const client = useClient();
  const [events, setEvents] = useState<TimelineEvent[]>([]);
  const [output, setOutput] = useState<string[]>([]);
  const [live, setLive] = useState<Live>('connecting');
  const [liveError, setLiveError] = useState<unknown>();
  // Bumped to follow the events again after a follow-up restarted an ended run.
  const [generation, setGeneration] = useState(0);
  const latest = useRef(callbacks);
  latest.current = callbacks;

  // biome-ignore lint/correctness/useExhaustiveDependencies: what was seen of one run is cleared when another run is shown
  useEffect(() => {
    setEvents([]);
    setOutput([]);
  }, [runId]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: following restarts only for another run or a new generation
  useEffect(() => {
    setLive('connecting');
    const follower = followRunEvents(client, runId, {
      onTimeline(event) {
        setEvents((current) =>
          current.some((seen) => seen.event_uuid === event.event_uuid) ? current : [...current, event],
        );
        latest.current.onTimeline();
      },
      onOutput(event) {
        setOutput((current) =>
          current.length >= OUTPUT_LINES
            ? [...current.slice(-(OUTPUT_LINES - 1)), event.line]
            : [...current, event.line],
        );
        latest.current.onOutput();
      },
      onEnd() {
        setLive('ended');
        latest.current.onEnd();
      },
      onError(error) {
        setLive('failed');
        setLiveError(error);
      },
      onConnection(connected) {
        setLive(connected ? 'live' : 'reconnecting');
      },
    });
    return () => follower.stop();
  }, [client, runId, generation]);

  const restart = useCallback(() => setGeneration((value) => value + 1), []);
  return { events, output, live, liveError, restart };
}
