// The OTLP/HTTP receiver in a process of its own, as a collector would be: its decoding is not the server's cost.
// Prints its URL on the first line, then receives (decoding every batch, keeping none) until its standard input
// closes; then prints `receiver: N spans, M ms CPU in S s` (its own CPU from start to end) and exits.
import { startOtlpReceiver } from '../../test/support/otlp-receiver.js';

const receiver = await startOtlpReceiver({ keep: false });
const cpuAtStart = process.cpuUsage();
const startedAt = performance.now();
process.stdout.write(`${receiver.url}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  const { user, system } = process.cpuUsage(cpuAtStart);
  const seconds = (performance.now() - startedAt) / 1000;
  process.stdout.write(
    `receiver: ${receiver.received()} spans, ${((user + system) / 1000).toFixed(0)} ms CPU in ${seconds.toFixed(1)} s\n`,
  );
  void receiver.stop().then(() => process.exit(0));
});
