/**
 * A real private image registry on loopback for the container tests (no registry is reachable from the test
 * machines): Docker's own registry (distribution, Debian's `docker-registry`) with htpasswd basic auth, behind a small
 * TLS front that records which credential every request carried and keeps each user to its namespaces, as a hosted
 * registry's permissions do (distribution's htpasswd lets any valid user read every repository).
 *
 * Podman pulls only over TLS from a registry it is not told is insecure: the front's certificate (made with openssl
 * for 127.0.0.1) is put where containers/image and Docker look for a registry's CA, /etc/containers/certs.d/<host:port>
 * and /etc/docker/certs.d/<host:port>, read at each pull, and removed at stop.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runQuietly } from '../../src/execution/sandbox/container/exec.js';
import { registryAuthHeader } from '../../src/execution/sandbox/container/pull.js';
import { BASE_IMAGE, type TestEngine } from './container-engines.js';
import { freePort } from './server.js';

const REGISTRY_BINARY = '/usr/bin/docker-registry';

/** A registry account: its password, and the namespaces (first path components) it may read and write; `*` all. */
export interface RegistryUser {
  password: string;
  namespaces: string[];
}

/**
 * The accounts, with bcrypt hashes made once (cost 4; distribution's htpasswd takes bcrypt only): `len0`..`len2` have
 * passwords one character apart, so that their credentials' JSON covers the three lengths modulo 3 whatever the port.
 */
export const REGISTRY_USERS: Record<string, RegistryUser & { hash: string }> = {
  alice: {
    password: 'alice-pull-7Hq2',
    namespaces: ['teama'],
    hash: '$2b$04$.lQ36MgVy/ZfP.GmS10Cv.uy1NhN257E8.tyr6Eb/1ucPAplZP/iC',
  },
  bob: {
    password: 'bob-pull-Zr81',
    namespaces: ['teamb'],
    hash: '$2b$04$ZZx3JMpQ20q20lME5qaxLe8YCnpm8yYXXJlgNXmJDyIopqvus0EJO',
  },
  admin: {
    password: 'admin-only-pull-Q9x',
    namespaces: ['teama'],
    hash: '$2b$04$uhbOffW7paKM7m2LZbs2X.QNrYJImU.oZ0btt54MOzNx6xUnb3KSO',
  },
  pusher: {
    password: 'pusher-push-Kd03',
    namespaces: ['*'],
    hash: '$2b$04$lwmfLvykB9xikAHkjaI27.GNNiNaV9Z3nfeoazKdk4czwvB5gsFny',
  },
  len0: {
    password: 'pw-len-a',
    namespaces: ['lengths'],
    hash: '$2b$04$TkbtGAlZt6Za.grfTr93Be4IQdRcSQ9yzLWNDlz/RqkjNamnN4qci',
  },
  len1: {
    password: 'pw-len-ab',
    namespaces: ['lengths'],
    hash: '$2b$04$bNA/PbX4qMipi969msOZRuRre.I9nmQg9wmHecuHhbmA3xREe34cy',
  },
  len2: {
    password: 'pw-len-abc',
    namespaces: ['lengths'],
    hash: '$2b$04$Bj146aP3QtNQeuikxpQwxeogKf/TXegw95V6qC9DTx6IMblQP9dKu',
  },
};

/** One request the registry received: the credential it carried (undefined: none), and for which path. */
export interface RegistryRequest {
  method: string;
  path: string;
  username: string | undefined;
  password: string | undefined;
}

/** Why the registry tests cannot run here; false when they can. */
export function registrySkipReason(): string | false {
  if (fs.existsSync(REGISTRY_BINARY) && hasOpenssl()) return false;
  const reason = `no ${REGISTRY_BINARY} (Debian's docker-registry, installed by scripts/container-engines.sh) or openssl`;
  if (process.env.CI === 'true') throw new Error(`CI=true, but ${reason}`);
  return reason;
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export class ImageRegistry {
  /** Every request in arrival order. */
  readonly requests: RegistryRequest[] = [];
  /** `127.0.0.1:<port>`: the registry part of its image references, and the credentials' serveraddress. */
  address = '';
  private readonly directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-registry-'));
  private registry: ChildProcess | undefined;
  private front: https.Server | undefined;
  private readonly trustDirectories: string[] = [];

  async start(): Promise<void> {
    const { directory } = this;
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(directory, 'key.pem'),
        '-out',
        path.join(directory, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    fs.writeFileSync(
      path.join(directory, 'htpasswd'),
      Object.entries(REGISTRY_USERS)
        .map(([name, user]) => `${name}:${user.hash}\n`)
        .join(''),
    );
    const backend = await this.startRegistry();
    const front = https.createServer(
      {
        key: fs.readFileSync(path.join(directory, 'key.pem')),
        cert: fs.readFileSync(path.join(directory, 'cert.pem')),
      },
      (request, response) => this.forward(backend, request, response),
    );
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    this.front = front;
    this.address = `127.0.0.1:${(front.address() as AddressInfo).port}`;
    for (const root of ['/etc/containers/certs.d', '/etc/docker/certs.d']) {
      const trust = path.join(root, this.address);
      fs.mkdirSync(trust, { recursive: true });
      fs.copyFileSync(path.join(directory, 'cert.pem'), path.join(trust, 'ca.crt'));
      this.trustDirectories.push(trust);
    }
  }

  async stop(): Promise<void> {
    for (const trust of this.trustDirectories) fs.rmSync(trust, { recursive: true, force: true });
    this.front?.closeAllConnections();
    await new Promise<void>((resolve) => (this.front ? this.front.close(() => resolve()) : resolve()));
    const registry = this.registry;
    if (registry && registry.exitCode === null && registry.signalCode === null) {
      const exited = new Promise((resolve) => registry.once('exit', resolve));
      registry.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.directory, { recursive: true, force: true });
  }

  /** The requests that carried `username`'s credential, or (undefined) none. */
  from(username: string | undefined): RegistryRequest[] {
    return this.requests.filter((request) => request.username === username);
  }

  /**
   * Makes an image on `engine` holding `/private-marker` with `marker`, pushes it to `repository` (`teama/private:1`)
   * in this registry as `pusher`, and removes it from the engine: whoever runs it next must pull it. Returns its
   * reference.
   */
  async pushImage(engine: TestEngine, repository: string, marker: string): Promise<string> {
    const reference = `${this.address}/${repository}`;
    const colon = reference.lastIndexOf(':');
    const [repo, tag] = [reference.slice(0, colon), reference.slice(colon + 1)];
    const { body } = await engine.client.call<{ Id: string }>('POST', '/containers/create', {
      Image: BASE_IMAGE,
      Entrypoint: ['sleep'],
      Cmd: ['infinity'],
      User: '0:0',
      HostConfig: { NetworkMode: 'none' },
    });
    try {
      await engine.client.call('POST', `/containers/${body.Id}/start`);
      await runQuietly(engine.client, body.Id, ['/bin/sh', '-c', `printf '%s\\n' '${marker}' > /private-marker`]);
      await engine.client.call(
        'POST',
        `/commit?container=${body.Id}&repo=${encodeURIComponent(repo)}&tag=${tag}&pause=false`,
        { Cmd: ['sleep', 'infinity'] },
      );
    } finally {
      await engine.client.call('DELETE', `/containers/${body.Id}?force=true`, undefined, {}, [404]);
    }
    const push = await engine.client.stream('POST', `/images/${encodeURIComponent(repo)}/push?tag=${tag}`, {
      'X-Registry-Auth': registryAuthHeader({
        username: 'pusher',
        password: REGISTRY_USERS.pusher!.password,
        serveraddress: this.address,
      }),
    });
    let output = '';
    for await (const chunk of push) output += chunk.toString();
    if (/"error"/.test(output)) throw new Error(`pushing ${reference} failed: ${output.slice(-500)}`);
    await removeImage(engine, reference);
    return reference;
  }

  /** distribution on a loopback port of its own (plain HTTP: only the front reaches it); another port if taken. */
  private async startRegistry(): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const config = path.join(this.directory, 'config.yml');
      fs.writeFileSync(
        config,
        [
          'version: 0.1',
          'log: { level: info }',
          `storage: { filesystem: { rootdirectory: ${path.join(this.directory, 'data')} }, delete: { enabled: true } }`,
          // Relative upload locations: the client follows them through the TLS front, not to this plain port.
          `http: { addr: "127.0.0.1:${port}", relativeurls: true }`,
          `auth: { htpasswd: { realm: hangar-test, path: ${path.join(this.directory, 'htpasswd')} } }`,
          '',
        ].join('\n'),
      );
      const child = spawn(REGISTRY_BINARY, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
      const listening = await new Promise<boolean>((resolve) => {
        let log = '';
        const onData = (chunk: Buffer) => {
          log += chunk.toString();
          if (log.includes(`listening on 127.0.0.1:${port}`)) resolve(true);
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        child.once('exit', () => resolve(false));
      });
      if (listening) {
        this.registry = child;
        // Drained: a full pipe would stall the registry.
        child.stdout!.resume();
        child.stderr!.resume();
        return `http://127.0.0.1:${port}`;
      }
      if (attempt >= 3) throw new Error('docker-registry did not start');
    }
  }

  /** Records the request's credential, refuses a user outside its namespaces, and passes the rest on. */
  private forward(backend: string, request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = request.url ?? '/';
    const [username, password] = basicCredentials(request.headers.authorization);
    this.requests.push({ method: request.method ?? 'GET', path: url, username, password });
    const repository = /^\/v2\/(.+?)\/(?:manifests|blobs|tags)\//.exec(url)?.[1];
    const user = username === undefined ? undefined : REGISTRY_USERS[username];
    const namespace = repository?.split('/')[0];
    if (
      repository &&
      user &&
      user.password === password &&
      !user.namespaces.includes('*') &&
      !user.namespaces.includes(namespace!)
    ) {
      response.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': 'Basic realm="hangar-test"',
        'docker-distribution-api-version': 'registry/2.0',
      });
      response.end(
        JSON.stringify({
          errors: [{ code: 'UNAUTHORIZED', message: 'authentication required', detail: [{ name: repository }] }],
        }),
      );
      request.resume();
      return;
    }
    const target = new URL(url, backend);
    const upstream = http.request(
      target,
      { method: request.method, headers: { ...request.headers, 'x-forwarded-proto': 'https' } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  }
}

function basicCredentials(header: string | undefined): [string | undefined, string | undefined] {
  if (!header?.startsWith('Basic ')) return [undefined, undefined];
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? [decoded, undefined] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** Removes an image name from the engine (the image with it when no other name holds it); one not there is fine. */
export async function removeImage(engine: TestEngine, reference: string): Promise<void> {
  await engine.client.call('DELETE', `/images/${encodeURIComponent(reference)}?force=true`, undefined, {}, [404, 409]);
}
