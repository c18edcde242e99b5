import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { API_TYPES_FILE, apiTypes } from '../../scripts/api-types.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

test("the web client's generated types match the server's OpenAPI document", async () => {
  const response = await fetch(`${hangar.apiUrl}/openapi.json`);
  assert.equal(response.status, 200);
  const expected = await apiTypes(await response.json());
  // Not assert.equal: a 370 KB diff helps nobody; the command that fixes it does.
  assert.ok(
    fs.readFileSync(API_TYPES_FILE, 'utf8') === expected,
    'web/src/api/schema.d.ts is stale: run `npm run gen:api-types` and commit it',
  );
});
