/**
 * Container images and registry credentials between teams (issue 47: 2, 3 and the X-Registry-Auth padding), attacked
 * for real: a Hangar server whose runs go to containers on Podman's real service, and a real private registry on
 * loopback (Docker's distribution with htpasswd, behind a front that records which credential each request carried:
 * test/support/image-registry.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { BASE_IMAGE, type TestEngine, testEngines } from '../support/container-engines.js';
import { outputTexts, waitForStateAs } from '../support/engine.js';
import { ImageRegistry, REGISTRY_USERS, registrySkipReason, removeImage } from '../support/image-registry.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SHELL_HARNESS = fileURLToPath(new URL('../execution/fixtures/shell-harness.mjs', import.meta.url));
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

const { engines, skipReason: noEngine } = testEngines();
// Podman's service first: it is where the padding mattered. Docker Engine too when it is there.
const podman = engines.find((engine) => engine.name === 'podman');
const docker = engines.find((engine) => engine.name === 'docker');
const registryMissing = noEngine || registrySkipReason();

const credential = (user: string) => `${user}:${REGISTRY_USERS[user]!.password}`;

for (const [name, found] of [
  ['podman', podman],
  ['docker', docker],
] as const) {
  describe(`container images and registry credentials between teams (${name}, a real private registry)`, {
    skip: registryMissing || (found ? false : `no ${name} engine (HANGAR_TEST_${name.toUpperCase()}_HOST)`),
  }, () => {
    const engine = found as TestEngine;
    const registry = new ImageRegistry();
    const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-container-images-'));
    const pushed: string[] = [];
    let hangar: TestServer;
    let teamB: { teamUid: string; userUid: string; apiKey: string };
    /** Team A's private image (its marker file is the secret), on alice's namespace. */
    let privateImage: string;
    const privateMarker = `team-a-private-${Math.random().toString(36).slice(2)}`;

    before(async () => {
      await registry.start();
      privateImage = await registry.pushImage(engine, 'teama/private:1', privateMarker);
      pushed.push(privateImage);
      const file = path.join(configDirectory, 'hangar.yaml');
      fs.writeFileSync(
        file,
        YAML.stringify({ harnesses: { shell: { command: [process.execPath, SHELL_HARNESS], timeout_minutes: 3 } } }),
      );
      hangar = await startTestServer({
        HANGAR_CONFIG: file,
        HANGAR_SANDBOX: 'container',
        DOCKER_HOST: engine.dockerHost,
        HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
        HANGAR_SETUP_NETWORK: 'false',
      });
      teamB = await hangar.createTeamWithUser();
    });

    after(async () => {
      await hangar?.stop();
      for (const reference of pushed) await removeImage(engine, reference);
      await registry.stop();
      fs.rmSync(configDirectory, { recursive: true, force: true });
    });

    const api = (method: string, route: string, body?: unknown, apiKey?: string) =>
      hangar.request(method, `/api/v1${route}`, {
        ...(body === undefined ? {} : { body }),
        ...(apiKey ? { apiKey } : {}),
      });

    async function secret(name: string, value: string, apiKey?: string): Promise<void> {
      const created = await api('POST', '/secrets', { name, value }, apiKey);
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }

    async function environment(body: Record<string, unknown>, apiKey?: string): Promise<string> {
      const created = await api('POST', '/environments', { name: `env ${Math.random()}`, ...body }, apiKey);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body.uid;
    }

    /** Runs `command` in the environment as the key's team; the run's end and, when it succeeded, its output lines. */
    async function run(environmentId: string, command: string, apiKey = hangar.apiKey) {
      const created = await api(
        'POST',
        '/agent/runs',
        { prompt: command, config: { harness: { type: 'shell' }, environment_id: environmentId } },
        apiKey,
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const runId: string = created.body.run_id;
      const ended = await waitForStateAs(hangar, apiKey, runId, ...TERMINAL);
      const lines = ended.state === 'SUCCEEDED' ? await outputTexts(hangar, runId, apiKey) : [];
      return { run: ended, lines };
    }

    test("team B cannot run team A's private image, pulled with A's credentials, without presenting credentials for it", async () => {
      await secret('A_PULL', credential('alice'));
      const own = await run(
        await environment({ docker_image: privateImage, registry_secret_name: 'A_PULL' }),
        'cat /private-marker',
      );
      assert.equal(own.run.state, 'SUCCEEDED', JSON.stringify(own.run));
      assert.deepEqual(own.lines, [privateMarker]);
      // The engine holds the image now. Team B names it with no credential, by its tag and by its digest.
      const inspected = await engine.client.call<{ RepoDigests: string[] }>(
        'GET',
        `/images/${encodeURIComponent(privateImage)}/json`,
      );
      const digest = inspected.body.RepoDigests.find((entry) => entry.startsWith(`${registry.address}/teama/private@`));
      assert.ok(digest, JSON.stringify(inspected.body.RepoDigests));
      for (const image of [privateImage, digest]) {
        const anonymous = registry.from(undefined).length;
        const stolen = await run(
          await environment({ docker_image: image }, teamB.apiKey),
          'cat /private-marker',
          teamB.apiKey,
        );
        assert.equal(stolen.run.state, 'FAILED', `${image}: ${JSON.stringify(stolen.run)}`);
        assert.equal(stolen.run.status_message.error_code, 'environment_setup_failed');
        assert.match(stolen.run.status_message.message, /registry_secret_name/);
        assert.ok(!JSON.stringify(stolen).includes(privateMarker));
        // It was the registry that said no: Hangar asked it, without credentials, instead of reusing the image.
        assert.ok(registry.from(undefined).length > anonymous, 'the registry was asked');
      }
      // With credentials the registry refuses (bob's are for team B's namespace), the image is not given either.
      // (By digest too: Docker's pull of a digest it holds asks no registry.)
      await secret('B_PULL', credential('bob'), teamB.apiKey);
      for (const image of [privateImage, digest]) {
        const wrong = await run(
          await environment({ docker_image: image, registry_secret_name: 'B_PULL' }, teamB.apiKey),
          'cat /private-marker',
          teamB.apiKey,
        );
        assert.equal(wrong.run.state, 'FAILED', `${image}: ${JSON.stringify(wrong.run)}`);
        assert.match(wrong.run.status_message.message, /unauthorized|authentication required/i);
      }
      // Team A's own runs go on: each pulls with its credentials again (a manifest request of the registry's).
      const alice = registry.from('alice').length;
      const again = await run(
        await environment({ docker_image: privateImage, registry_secret_name: 'A_PULL' }),
        'cat /private-marker',
      );
      assert.deepEqual(again.lines, [privateMarker]);
      assert.ok(registry.from('alice').length > alice);
    });

    test("an environment's image is a reference: IDs, ID prefixes, sha256: IDs and Hangar's setup snapshots are refused (400)", async () => {
      const base = await engine.client.call<{ Id: string }>('GET', `/images/${encodeURIComponent(BASE_IMAGE)}/json`);
      const id = base.body.Id.replace(/^sha256:/, '');
      const existing = await environment({ docker_image: 'ubuntu:24.04' });
      for (const image of [
        id.slice(0, 1),
        id.slice(0, 12),
        id,
        `sha256:${id}`,
        `localhost/hangar-snapshot:${'0'.repeat(24)}`,
        'hangar-snapshot:latest',
      ]) {
        for (const [method, route] of [
          ['POST', '/environments'],
          ['PUT', `/environments/${existing}`],
        ] as const) {
          const refused = await api(method, route, { name: 'by id', docker_image: image });
          assert.equal(refused.status, 400, `${method} ${image}: ${JSON.stringify(refused.body)}`);
          assert.equal(refused.body.error_code, 'invalid_request');
          assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
          assert.match(refused.body.detail, /by its ID|setup snapshots/, image);
        }
      }
    });

    test("a guest's run of a shared environment pulls with the owner's registry secret, never the guest's secret of that name", async () => {
      await secret('GHCR_PULL', credential('alice'));
      await secret('GHCR_PULL', credential('bob'), teamB.apiKey);
      const shared = await environment({ docker_image: privateImage, registry_secret_name: 'GHCR_PULL' });
      const guest = await api('POST', `/environments/${shared}/guests`, { team_uid: teamB.teamUid });
      assert.equal(guest.status, 200, JSON.stringify(guest.body));
      const since = registry.requests.length;
      const byGuest = await run(shared, 'cat /private-marker', teamB.apiKey);
      assert.equal(byGuest.run.state, 'SUCCEEDED', JSON.stringify(byGuest.run));
      assert.deepEqual(byGuest.lines, [privateMarker]);
      const received = registry.requests.slice(since);
      assert.ok(
        received.some((request) => request.username === 'alice'),
        "the owner's credential pulled the image",
      );
      assert.deepEqual(
        received.filter((request) => request.username === 'bob' || request.password === REGISTRY_USERS.bob!.password),
        [],
        "the guest's secret of the same name never reached the owner's registry",
      );
    });

    test("a member cannot point an admin's environment, or her own, at a registry with a secret she may not use (403)", async () => {
      await secret('ADMIN_PULL', credential('admin'));
      const member = await hangar.addUser(hangar.teamUid, 'member');
      const adminEnvironment = await environment({
        name: 'admin image',
        docker_image: privateImage,
        registry_secret_name: 'ADMIN_PULL',
        setup_commands: ['true'],
      });
      // Granted to the environment (its runs may use it), which is not the member.
      assert.equal(
        (
          await api('POST', '/secrets/ADMIN_PULL/grants', {
            grantee_type: 'environment',
            grantee_uid: adminEnvironment,
          })
        ).status,
        201,
      );
      const herRegistry = `${registry.address}/teamb/exfil:1`;
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['the image', { docker_image: herRegistry, registry_secret_name: 'ADMIN_PULL', setup_commands: ['true'] }],
        ['the setup', { docker_image: privateImage, registry_secret_name: 'ADMIN_PULL', setup_commands: ['id'] }],
      ];
      for (const [what, change] of attempts) {
        const refused = await api(
          'PUT',
          `/environments/${adminEnvironment}`,
          { name: 'admin image', ...change },
          member.apiKey,
        );
        assert.equal(refused.status, 403, `${what}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error_code, 'not_authorized');
        assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
        assert.match(refused.body.detail, /ADMIN_PULL.*not granted to you/);
      }
      // Nor can she name the secret in an environment of her own, or add it to one.
      const mine = await environment({ docker_image: herRegistry }, member.apiKey);
      const named = await api(
        'PUT',
        `/environments/${mine}`,
        { name: 'mine', docker_image: herRegistry, registry_secret_name: 'ADMIN_PULL' },
        member.apiKey,
      );
      assert.equal(named.status, 403, JSON.stringify(named.body));
      const created = await api(
        'POST',
        '/environments',
        { name: 'mine too', docker_image: herRegistry, registry_secret_name: 'ADMIN_PULL' },
        member.apiKey,
      );
      assert.equal(created.status, 403, JSON.stringify(created.body));
      // What does not touch where the secret goes stays hers to change.
      const renamed = await api(
        'PUT',
        `/environments/${adminEnvironment}`,
        { name: 'renamed', docker_image: privateImage, registry_secret_name: 'ADMIN_PULL', setup_commands: ['true'] },
        member.apiKey,
      );
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      // The admin's next run sends the secret where the admin said, and nowhere else.
      const since = registry.requests.length;
      const adminRun = await run(adminEnvironment, 'cat /private-marker');
      assert.deepEqual(adminRun.lines, [privateMarker]);
      const sent = registry.requests.slice(since).filter((request) => request.username === 'admin');
      assert.ok(sent.length > 0);
      assert.ok(
        sent.every((request) => !request.path.includes('/teamb/')),
        JSON.stringify(sent),
      );
      // Granted to her, she may re-point it.
      assert.equal(
        (await api('POST', '/secrets/ADMIN_PULL/grants', { grantee_type: 'member', grantee_uid: member.userUid }))
          .status,
        201,
      );
      const granted = await api(
        'PUT',
        `/environments/${adminEnvironment}`,
        { name: 'renamed', docker_image: herRegistry, registry_secret_name: 'ADMIN_PULL' },
        member.apiKey,
      );
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
    });

    test(`a private pull on ${name} works for credentials of every length modulo 3 (X-Registry-Auth keeps its padding)`, async () => {
      const image = await registry.pushImage(engine, 'lengths/app:1', 'lengths-ok');
      pushed.push(image);
      const residues = new Set<number>();
      for (const user of ['len0', 'len1', 'len2']) {
        const auth = { username: user, password: REGISTRY_USERS[user]!.password, serveraddress: registry.address };
        residues.add(JSON.stringify(auth).length % 3);
        await secret(`LEN_${user.toUpperCase()}`, credential(user));
        const pulled = await run(
          await environment({ docker_image: image, registry_secret_name: `LEN_${user.toUpperCase()}` }),
          'cat /private-marker',
        );
        assert.equal(pulled.run.state, 'SUCCEEDED', `${user}: ${JSON.stringify(pulled.run)}`);
        assert.deepEqual(pulled.lines, ['lengths-ok']);
        assert.ok(registry.from(user).length > 0, `${user}'s credential reached the registry`);
      }
      assert.deepEqual([...residues].sort(), [0, 1, 2]);
    });
  });
}
