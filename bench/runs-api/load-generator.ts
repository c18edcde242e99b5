// Child process that generates the load (autocannon), so that the servers' process measures only its own CPU
// and the load generator never competes with them for one event loop. Protocol over IPC: it says 'ready',
// then answers each options message with autocannon's result.
import autocannon from 'autocannon';

if (!process.send) throw new Error('load-generator.ts runs as a child process (see load.ts)');
process.on('message', (options: autocannon.Options) => {
  autocannon(options).then(
    (result) => process.send!({ result }),
    (error: unknown) => process.send!({ error: String(error) }),
  );
});
process.send('ready');
