import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The egress tests' own internet: a network namespace this test makes, joined to the test's namespace by a veth pair,
 * with a few addresses, each serving HTTP on 80 and HTTPS on 443 (a certificate of a test authority for every
 * name). Nothing here reaches beyond the machine: the addresses exist only on this veth pair.
 */

export interface EgressHosts {
  /** The test authority's certificate, for curl's --cacert and git's http.sslCAInfo. */
  caFile: string;
  /** The addresses of the servers: two the operator allows (`allowed`), one that stays private (`private`). */
  addresses: { allowed: string; other: string; private: string };
  /** The range the operator lets the proxy reach (HANGAR_EGRESS_ALLOWED_ADDRESSES in the tests). */
  range: string;
  /**
   * Every server also serves a bare git repository (one commit, a README saying "egress repository") at
   * https://<name>/repo.git over git's dumb HTTP protocol, and an npm registry of one package, egress-test-package
   * 1.0.0 (its index.js exports "egress package"), at https://<name>/.
   */
  stop(): void;
}

export function egressHostsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const SERVER = `
const http = require('node:http'), https = require('node:https'), fs = require('node:fs'), path = require('node:path');
const [key, cert] = [fs.readFileSync(process.argv[1]), fs.readFileSync(process.argv[2])];
const big = Buffer.alloc(Number(process.argv[3]), 120);
const [repository, tarball] = [process.argv[4], fs.readFileSync(process.argv[5])];
const handler = (request, response) => {
  if (request.url === '/big') { response.writeHead(200, {'content-length': big.length}); return response.end(big); }
  // A bare repository over git's dumb HTTP protocol: its files as they are.
  if (request.url.startsWith('/repo.git/')) {
    const file = path.join(repository, path.normalize(request.url.slice('/repo.git/'.length).split('?')[0]));
    if (!file.startsWith(repository) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { response.statusCode = 404; return response.end(); }
    return fs.createReadStream(file).pipe(response);
  }
  // A registry of one package: its document and its tarball.
  const origin = 'https://' + request.headers.host;
  if (request.url === '/egress-test-package') {
    response.setHeader('content-type', 'application/json');
    return response.end(JSON.stringify({
      name: 'egress-test-package', 'dist-tags': { latest: '1.0.0' },
      versions: { '1.0.0': { name: 'egress-test-package', version: '1.0.0', dist: { tarball: origin + '/egress-test-package/-/egress-test-package-1.0.0.tgz' } } },
    }));
  }
  if (request.url === '/egress-test-package/-/egress-test-package-1.0.0.tgz') return response.end(tarball);
  response.end('hello from ' + request.headers.host + ' over ' + (request.socket.encrypted ? 'https' : 'http') + '\\n');
};
let ready = 0;
const up = () => { if (++ready === 3) process.stdout.write('ready\\n'); };
// A resolver of the test's own that answers anything: the sandbox must never get its answer.
const udp = require('node:dgram').createSocket('udp4');
udp.on('message', (message, peer) => udp.send(message, peer.port, peer.address));
udp.bind(53, '0.0.0.0', up);
http.createServer(handler).listen(80, '0.0.0.0', up);
https.createServer({ key, cert }, handler).listen(443, '0.0.0.0', up);
`;

/** Makes the namespace, its addresses and servers; `names` are the DNS names the certificate covers. */
export async function startEgressHosts(names: string[], bigBytes = 1024 * 1024): Promise<EgressHosts> {
  const tag = `${process.pid % 10000}`;
  const namespace = `hgeg${tag}`;
  const outside = `hgeg${tag}o`;
  const inside = `hgeg${tag}i`;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-egress-hosts-'));
  const octet = 20 + (process.pid % 200);
  const addresses = { allowed: `10.231.${octet}.2`, other: `10.231.${octet}.3`, private: `10.232.${octet}.2` };
  const sh = (command: string) => execFileSync('sh', ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'] });
  sh(
    [
      `openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ${directory}/ca.key -out ${directory}/ca.pem`,
      `openssl req -newkey rsa:2048 -nodes -subj /CN=${names[0]} -keyout ${directory}/key.pem -out ${directory}/req.pem`,
      `printf 'subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}' > ${directory}/ext`,
      `openssl x509 -req -in ${directory}/req.pem -CA ${directory}/ca.pem -CAkey ${directory}/ca.key -CAcreateserial -days 1 -extfile ${directory}/ext -out ${directory}/cert.pem`,
      // The repository: one commit, and the files dumb HTTP clients read (info/refs, objects/info/packs).
      `git init -q ${directory}/work && echo 'egress repository' > ${directory}/work/README`,
      `git -C ${directory}/work -c user.name=t -c user.email=t@t add README`,
      `git -C ${directory}/work -c user.name=t -c user.email=t@t commit -qm one`,
      `git clone -q --bare ${directory}/work ${directory}/repo.git && git -C ${directory}/repo.git update-server-info`,
      // The package's tarball, in npm's layout (package/...).
      `mkdir -p ${directory}/pkg/package`,
      `printf '{"name":"egress-test-package","version":"1.0.0","main":"index.js"}' > ${directory}/pkg/package/package.json`,
      `printf 'module.exports = "egress package";' > ${directory}/pkg/package/index.js`,
      `tar -czf ${directory}/package.tgz -C ${directory}/pkg package`,
    ].join(' && '),
  );
  let server: ChildProcess | undefined;
  const stop = () => {
    server?.kill('SIGKILL');
    try {
      sh(`ip link del ${outside} 2>/dev/null; ip netns del ${namespace} 2>/dev/null; true`);
    } catch {
      // already gone
    }
    fs.rmSync(directory, { recursive: true, force: true });
  };
  try {
    sh(`ip netns del ${namespace} 2>/dev/null; ip link del ${outside} 2>/dev/null; true`);
    sh(
      [
        `ip netns add ${namespace}`,
        `ip link add ${outside} type veth peer name ${inside}`,
        `ip link set ${inside} netns ${namespace}`,
        `ip addr add 10.231.${octet}.1/24 dev ${outside}`,
        `ip addr add 10.232.${octet}.1/24 dev ${outside}`,
        `ip link set ${outside} up`,
        `ip -n ${namespace} addr add ${addresses.allowed}/24 dev ${inside}`,
        `ip -n ${namespace} addr add ${addresses.other}/24 dev ${inside}`,
        `ip -n ${namespace} addr add ${addresses.private}/24 dev ${inside}`,
        `ip -n ${namespace} link set ${inside} up`,
        `ip -n ${namespace} link set lo up`,
      ].join(' && '),
    );
    server = spawn(
      'ip',
      [
        'netns',
        'exec',
        namespace,
        process.execPath,
        '-e',
        SERVER,
        `${directory}/key.pem`,
        `${directory}/cert.pem`,
        String(bigBytes),
        `${directory}/repo.git`,
        `${directory}/package.tgz`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.once('data', () => resolve());
      server!.once('exit', (code) => reject(new Error(`the test hosts' server exited (${code})`)));
    });
  } catch (error) {
    stop();
    throw error;
  }
  return { caFile: `${directory}/ca.pem`, addresses, range: `10.231.${octet}.0/24`, stop };
}
