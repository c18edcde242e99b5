/**
 * A TCP proxy in front of a server that loses answers for real: requests pass through, and the first bytes of
 * the next answer the test arms it for are never delivered (the client's connection is cut instead). The
 * server has done its work by then (it answers only after it committed), so a client sees what a client of a
 * crashed server or a broken network sees. `onDrop` runs at that moment, e.g. to SIGKILL the server.
 */
import net from 'node:net';

export interface AnswerDroppingProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Where requests go; change it when the server restarts on another port. */
  targetPort: number;
  /**
   * Cuts the connection that carries the next answer, after calling `onDrop`; resolves once it is cut, with the
   * first bytes of the answer the client never got (its status line, to check the lost answer was a success).
   */
  dropNextAnswer(onDrop?: () => void): Promise<string>;
  close(): Promise<void>;
}

export async function answerDroppingProxy(targetPort: number): Promise<AnswerDroppingProxy> {
  const sockets = new Set<net.Socket>();
  let armed: { onDrop: () => void; dropped: (head: string) => void } | undefined;
  const server = net.createServer((client) => {
    const upstream = net.connect(proxy.targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (armed) {
        const { onDrop, dropped } = armed;
        armed = undefined;
        onDrop();
        client.destroy();
        upstream.destroy();
        dropped(chunk.toString('latin1', 0, 200));
        return;
      }
      if (!client.destroyed) client.write(chunk);
    });
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  const proxy: AnswerDroppingProxy = {
    url: `http://127.0.0.1:${address.port}`,
    targetPort,
    dropNextAnswer(onDrop = () => {}) {
      return new Promise<string>((dropped) => (armed = { onDrop, dropped }));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
