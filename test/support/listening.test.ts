import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { listensOn } from './listening.js';

test('listensOn tells the process listening on a port from another that answers there', async (t) => {
  // A child listening on a port of the kernel's choice, as a spawned server does.
  const child = spawn(
    process.execPath,
    ['-e', "const s = require('net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port))"],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => child.kill('SIGKILL'));
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const childPort = Number(line.toString().trim());
  // This process's own listener, on another port.
  const own = net.createServer().listen(0, '127.0.0.1');
  await once(own, 'listening');
  t.after(() => own.close());
  const ownPort = (own.address() as net.AddressInfo).port;

  assert.equal(listensOn(child.pid!, childPort), true);
  assert.equal(listensOn(process.pid, ownPort), true);
  assert.equal(listensOn(child.pid!, ownPort), false, 'the port answers, but not from the child');
  assert.equal(listensOn(process.pid, childPort), false);
  // A client connection is not a listener.
  const client = net.connect(childPort, '127.0.0.1');
  await once(client, 'connect');
  t.after(() => client.destroy());
  assert.equal(listensOn(process.pid, client.localPort!), false);
});
