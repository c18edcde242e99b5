// The OTLP/HTTP receiver in a process of its own, as a collector would be: its decoding is not the server's cost.
// Prints its URL on the first line, then receives until its standard input closes.
import { startOtlpReceiver } from '../../test/support/otlp-receiver.js';

const receiver = await startOtlpReceiver();
process.stdout.write(`${receiver.url}\n`);
process.stdin.resume();
process.stdin.on('end', () => void receiver.stop().then(() => process.exit(0)));
