import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import type { Bus } from '../platform/bus.js';
import { notFound } from '../platform/http/errors.js';
import { type NextPass, PollingLoop } from '../platform/loop.js';
import { parseEvent } from './harness-protocol.js';
import { isTerminal } from './lifecycle/states.js';
import { renderEvent } from './render.js';
import { type Visibility, visible } from './visibility.js';

/** Longest wait for a notification before looking anyway; a comment line also keeps proxies from timing out. */
const POLL_MS = 2000;
const HEARTBEAT_MS = 15_000;
const BATCH = 500;
/** Longest wait, after a cancel, for the engine to stop the harness (it ends within seconds, unless it died). */
const CANCEL_SETTLE_MS = 10_000;

/** A timestamp in microseconds since the epoch, as text: a Date from the driver would drop the microseconds. */
const microseconds = (column: string) => sql<string>`(extract(epoch from ${sql.ref(column)}) * 1000000)::bigint::text`;

/** Position in both streams: `<timeline seq>-<transcript seq>`, the SSE event ID, so a client can resume. */
function parsePosition(lastEventId: string | undefined): [bigint, bigint] {
  const match = /^(\d{1,18})-(\d{1,18})$/.exec(lastEventId ?? '');
  return match ? [BigInt(match[1]!), BigInt(match[2]!)] : [0n, 0n];
}

/**
 * `GET /agent/runs/{id}/events`: a Server-Sent Events stream of the run's timeline (`timeline` events) and its
 * harness output (`output` events, with the parsed protocol event when there is one). It ends with an `end`
 * event once the run has reached a terminal state and everything was sent. `Last-Event-ID` resumes.
 */
export async function streamRunEvents(
  db: Kysely<DB>,
  bus: Bus,
  who: Visibility,
  runId: string,
  request: FastifyRequest,
  reply: FastifyReply,
  shutdown: AbortSignal,
): Promise<void> {
  const exists = await db
    .selectFrom('runs')
    .select('id')
    .where((eb) => visible(eb, who))
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!exists) throw notFound(`run ${runId} not found`);
  let [eventSeq, lineSeq] = parsePosition(request.headers['last-event-id'] as string | undefined);

  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // A HEAD answer has no body, so it would never send its headers while the stream lasts: the headers are all.
  if (request.method === 'HEAD') return void out.end();
  out.write('retry: 2000\n\n');

  const send = (event: string, data: unknown) =>
    out.write(`id: ${eventSeq}-${lineSeq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  let lastWrite = Date.now();
  let cancelledSince: number | undefined;

  /** One look at the run: sends what is new, and ends the stream once the run is over and everything was sent. */
  const pass = async (): Promise<NextPass> => {
    // Read the state first: if it is terminal, everything written before it is in the reads that follow.
    const run = await db
      .selectFrom('runs')
      .select(['state', 'sandbox_running'])
      .where('id', '=', runId)
      .executeTakeFirst();
    const events = await db
      .selectFrom('run_events')
      .select(['seq', 'event_uuid', 'run_id', 'execution_id', 'event_type', 'occurred_at', 'payload'])
      .select(microseconds('occurred_at').as('us'))
      .where('run_id', '=', runId)
      .where('seq', '>', String(eventSeq))
      .orderBy('seq')
      .limit(BATCH)
      .execute();
    const lines = await db
      .selectFrom('run_transcript')
      .select(['seq', 'execution_id', 'line'])
      .select(microseconds('at').as('us'))
      .where('run_id', '=', runId)
      .where('stream', '=', 'output')
      .where('seq', '>', String(lineSeq))
      .orderBy('seq')
      .limit(BATCH)
      .execute();
    // In order of occurrence, each stream still in its own order: a run that already ended replays its output
    // between the timeline entries it came between, not after its end. A full batch may stop short of entries of
    // the other stream that come later: the rest is sent by the next pass, which follows at once.
    let e = 0;
    let l = 0;
    while (e < events.length || l < lines.length) {
      const event = events[e];
      const line = lines[l];
      if (line && (!event || BigInt(line.us) < BigInt(event.us))) {
        if (!event && events.length === BATCH) break;
        lineSeq = BigInt(line.seq);
        send('output', { execution_id: line.execution_id, line: line.line, event: parseEvent(line.line) });
        l += 1;
      } else if (event) {
        if (!line && lines.length === BATCH) break;
        eventSeq = BigInt(event.seq);
        send('timeline', renderEvent(event));
        e += 1;
      }
    }
    if (events.length + lines.length > 0) lastWrite = Date.now();
    if (events.length === BATCH || lines.length === BATCH) return 'now';
    // A cancel ends the run before its harness has stopped: the last output and vm_shutdown follow, and the
    // engine clears sandbox_running once they are written. Wait for that, though not forever.
    const stopping = run?.state === 'CANCELLED' && run.sandbox_running;
    cancelledSince = stopping ? (cancelledSince ?? Date.now()) : undefined;
    const settling = stopping && Date.now() - cancelledSince! < CANCEL_SETTLE_MS;
    if (!run || (isTerminal(run.state) && !settling)) {
      send('end', { state: run?.state ?? 'DELETED' });
      return 'stop';
    }
    if (Date.now() - lastWrite >= HEARTBEAT_MS) {
      out.write(': keep-alive\n\n');
      lastWrite = Date.now();
    }
    return undefined;
  };
  const loop = new PollingLoop({
    intervalMs: POLL_MS,
    pass,
    // The stream ends, as when the client leaves; the client reconnects with Last-Event-ID.
    onError: (error) => {
      request.log.error({ err: error, runId }, 'live events failed');
      void loop.stop();
    },
  });
  // New rows wake the loop (a wake during a pass makes another pass follow at once); a departure stops it.
  const unsubscribe = bus.onRunActivity(runId, () => loop.wake());
  const close = () => void loop.stop();
  request.raw.on('close', close);
  shutdown.addEventListener('abort', close, { once: true });

  loop.start();
  await loop.ended; // never rejects: a failed pass ends the loop through onError
  shutdown.removeEventListener('abort', close);
  unsubscribe();
  out.end();
}
