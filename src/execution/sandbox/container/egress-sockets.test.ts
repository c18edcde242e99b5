import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { EgressSockets } from './egress-sockets.js';

// The host side of a container's way to the egress proxy, over real unix sockets, TCP and UDP.
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-egress-sockets-'));
let sockets: EgressSockets;
let proxy: net.Server;
let resolver: dgram.Socket;
const questions: Buffer[] = [];
let answering = true;

before(async () => {
  sockets = await EgressSockets.listen(path.join(directory, 'x'));
  proxy = net.createServer((socket) => socket.end('proxy answered\n'));
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  resolver = dgram.createSocket('udp4');
  resolver.on('message', (message, peer) => {
    questions.push(message);
    if (answering) resolver.send(Buffer.concat([Buffer.from('re:'), message]), peer.port, peer.address);
  });
  resolver.bind(0, '127.0.0.1');
  await once(resolver, 'listening');
});
after(() => {
  sockets.close();
  proxy.close();
  resolver.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

const lease = () => ({ proxyPort: (proxy.address() as net.AddressInfo).port, dnsPort: resolver.address().port });
const frame = (text: string) => {
  const body = Buffer.from(text);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(body.length);
  return Buffer.concat([length, body]);
};
/** Everything a connection to `file` gets until it closes (or `bytes` have come). */
async function read(file: string, send?: Buffer, bytes = Number.POSITIVE_INFINITY): Promise<string> {
  const client = net.connect(file);
  // A socket closed at once may refuse what is written: that is the answer too.
  client.on('error', () => undefined);
  if (send) client.write(send);
  let got = '';
  client.on('data', (chunk) => {
    got += chunk;
    if (got.length >= bytes) client.destroy();
  });
  // Not events.once: it would reject on the error above.
  await new Promise((resolve) => client.once('close', resolve));
  return got;
}

test('pointed nowhere, both sockets close every connection at once', async () => {
  sockets.point(undefined);
  assert.equal(await read(sockets.proxyFile), '');
  assert.equal(await read(sockets.dnsFile, frame('q')), '');
});

test('pointed at a lease, the proxy socket carries to its port and the DNS socket asks its resolver, framed', async () => {
  sockets.point(lease());
  assert.equal(await read(sockets.proxyFile), 'proxy answered\n');
  const answer = await read(sockets.dnsFile, frame('where is x?'), 2 + 're:where is x?'.length);
  assert.equal(answer.slice(2), 're:where is x?');
});

test('pointing elsewhere cuts what is open', async () => {
  sockets.point(lease());
  const client = net.connect(sockets.dnsFile);
  await once(client, 'connect');
  // Carried only once the connection is in: a question answered proves it.
  answering = true;
  client.write(frame('first'));
  await once(client, 'data');
  sockets.point(undefined);
  await once(client, 'close');
});

test('one connection has at most 32 questions waiting at once; the rest are dropped', async () => {
  sockets.point(lease());
  answering = false;
  questions.length = 0;
  const client = net.connect(sockets.dnsFile);
  await once(client, 'connect');
  client.write(Buffer.concat(Array.from({ length: 40 }, (_, index) => frame(`q${index}`))));
  // The resolver's socket gets each question the sockets sent; the 33rd and later never come.
  while (questions.length < 32) await once(resolver, 'message');
  const late = await Promise.race([
    once(resolver, 'message').then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), 300)),
  ]);
  assert.equal(late, false);
  assert.equal(questions.length, 32);
  client.destroy();
});
