import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { loadSecretKey } from '../../src/platform/secret-key.js';
import { instanceSecret } from '../../src/platform/settings.js';
import { UrlSigner } from '../../src/platform/signed-urls.js';
import { createTestDatabase, startTestServer } from '../support/server.js';

const INSTANCE_KEYS = ['cursor_signing_key', 'download_signing_key', 'task_token_key'];

test('instance signing keys are stored encrypted, older clear ones are sealed on start, and over-long links are refused', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  let hangar = await startTestServer({}, { database });
  t.after(() => hangar.stop());

  // Nothing in instance_settings a dump would hand over: no key in clear.
  const rows = await hangar.db.selectFrom('instance_settings').selectAll().where('key', 'in', INSTANCE_KEYS).execute();
  assert.equal(rows.length, INSTANCE_KEYS.length);
  for (const row of rows) assert.equal(row.value, null, `${row.key} is stored in clear`);

  const secretKey = loadSecretKey(undefined, hangar.dataDir);
  const signingKey = await instanceSecret(hangar.db, 'download_signing_key', secretKey);
  const signer = new UrlSigner(signingKey, () => hangar.url, 10 * 365 * 24 * 3600);
  const path = `/api/v1/downloads/runs/${randomUUID()}/transcript`;

  // A link of the usual ten minutes works; one the same key signed for a year does not.
  assert.equal((await fetch(signer.sign(path, 600).url)).status, 200);
  const farFuture = await fetch(signer.sign(path, 365 * 24 * 3600).url);
  assert.equal(farFuture.status, 403);
  assert.match(((await farFuture.json()) as { detail: string }).detail, /not valid/);

  // A database written by an older version holds the key in clear: the next start seals it and keeps it.
  await hangar.stop();
  const legacy = await startTestServer({}, { database });
  await legacy.db
    .updateTable('instance_settings')
    .set({ value: signingKey, iv: null, auth_tag: null, ciphertext: null })
    .where('key', '=', 'download_signing_key')
    .execute();
  await legacy.stop();
  hangar = await startTestServer({}, { database });
  const sealed = await hangar.db
    .selectFrom('instance_settings')
    .selectAll()
    .where('key', '=', 'download_signing_key')
    .executeTakeFirstOrThrow();
  assert.equal(sealed.value, null);
  assert.ok(sealed.ciphertext && !sealed.ciphertext.toString('latin1').includes(signingKey));
  const relink = new UrlSigner(signingKey, () => hangar.url, 600);
  assert.equal((await fetch(relink.sign(path, 600).url)).status, 200, 'links signed with the old key still work');
});
