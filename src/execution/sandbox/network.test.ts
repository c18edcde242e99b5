import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loopbackApi } from './container/api-relay.js';
import { apiEndpoint, apiRoute } from './network.js';

test('apiEndpoint reads the host and port, with the scheme default, and knows the loopback forms', () => {
  assert.deepEqual(apiEndpoint('http://127.0.0.1:8080/api'), { host: '127.0.0.1', port: 8080, loopback: true });
  assert.deepEqual(apiEndpoint('http://[::1]:9000'), { host: '::1', port: 9000, loopback: true });
  assert.deepEqual(apiEndpoint('https://localhost'), { host: 'localhost', port: 443, loopback: true });
  assert.deepEqual(apiEndpoint('http://10.1.2.3'), { host: '10.1.2.3', port: 80, loopback: false });
  assert.deepEqual(apiEndpoint('https://hangar.example.com:8443'), {
    host: 'hangar.example.com',
    port: 8443,
    loopback: false,
  });
  assert.equal(apiEndpoint(undefined), undefined);
  assert.equal(apiEndpoint('not a url'), undefined);
});

test('a loopback API is spliced into a bwrap sandbox and relayed into a container; any other is reached at its address', async () => {
  assert.deepEqual(await apiRoute('http://127.0.0.1:8080'), { spliced: true, port: 8080 });
  assert.deepEqual(loopbackApi('http://127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(await apiRoute('http://10.1.2.3:81'), { spliced: false, port: 81, addresses: ['10.1.2.3'] });
  assert.equal(loopbackApi('http://10.1.2.3:81'), undefined);
});
