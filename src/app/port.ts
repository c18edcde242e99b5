// The server's port is taken before anything else (issue 48): a first start spends about 28 s creating the embedded
// database, and a busy port used to be found only after that, as a bare EADDRINUSE. A socket listens on the port
// from the start and makes way for the HTTP app just before it listens, so the port is said busy at once, and in
// words naming PORT.
import net from 'node:net';

export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(
      `port ${port} on ${host} is in use (EADDRINUSE): another Hangar or another program listens there. Stop it, or start this one on another port with PORT (for example PORT=${port === 65535 ? port - 1 : port + 1}).`,
    );
  }
}

export const isAddressInUse = (error: unknown) => (error as { code?: string } | null)?.code === 'EADDRINUSE';

/** Holds `port` until `release()`; port 0 (any free port, the tests') holds nothing. */
export async function reservePort(host: string, port: number): Promise<{ release(): Promise<void> }> {
  if (port === 0) return { release: async () => undefined };
  // Whoever connects meanwhile (a health probe waiting for the server) is turned away at once: the holder answers
  // nothing, and a connection it kept open would hold up its close, and the start with it.
  const holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    holder.once('error', (error) => reject(isAddressInUse(error) ? new PortInUseError(host, port) : error));
    holder.listen({ port, host, exclusive: true }, () => resolve());
  });
  let released: Promise<void> | undefined;
  return { release: () => (released ??= new Promise((resolve) => holder.close(() => resolve()))) };
}
