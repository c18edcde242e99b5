// Child process that generates the load (autocannon), so that the servers' process measures only its own CPU
// and the load generator never competes with them for one event loop. Protocol over IPC: it says 'ready',
// then answers each { options, hooks? } message with autocannon's result (and the hooks' tally, if any).
import autocannon from 'autocannon';
import type { RequestHooks, RequestHooksFactory } from './load.js';

interface Message {
  options: autocannon.Options;
  /** A module whose default export makes per-request hooks (see RequestHooksModule in load.ts). */
  hooks?: { module: string; config: unknown };
}

/** One set of hooks per module for the generator's life: their state (counters, pools) spans its runs. */
const made = new Map<string, Promise<RequestHooks>>();
function hooksOf(spec: NonNullable<Message['hooks']>): Promise<RequestHooks> {
  let hooks = made.get(spec.module);
  if (!hooks) {
    hooks = import(spec.module).then((loaded: { default: RequestHooksFactory }) => loaded.default(spec.config));
    made.set(spec.module, hooks);
  }
  return hooks;
}

async function run({ options, hooks: spec }: Message): Promise<{ result: autocannon.Result; tally?: unknown }> {
  if (!spec) return { result: await autocannon(options) };
  const { setupRequest, onResponse, tally } = await hooksOf(spec);
  const requests = (options.requests ?? [{}]).map((request) => ({
    ...request,
    ...(setupRequest ? { setupRequest } : {}),
    ...(onResponse ? { onResponse: (status: number, body: string) => onResponse(status, body) } : {}),
  }));
  const result = await autocannon({ ...options, requests });
  return { result, tally: tally?.() };
}

if (!process.send) throw new Error('load-generator.ts runs as a child process (see load.ts)');
process.on('message', (message: Message) => {
  run(message).then(
    (answer) => process.send!(answer),
    (error: unknown) => process.send!({ error: String(error) }),
  );
});
process.send('ready');
