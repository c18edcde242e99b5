import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One image pull as the engine received it. */
export interface RecordedPull {
  fromImage: string | null;
  tag: string | null;
  /** The X-Registry-Auth header, decoded (base64url JSON); undefined when the pull carried none. */
  auth: Record<string, unknown> | undefined;
}

/**
 * The part of the Docker Engine API a server touches up to an image pull, on a real HTTP server (DOCKER_HOST
 * tcp://...): the ping, the container list its start-up clean-up asks for (empty), images that are never present,
 * and pulls that it records and then refuses the way a registry refusing the credentials does. No registry is
 * reachable from the test machines; this is how a test sees what Hangar sends one (test/support/image-registry.ts is a
 * real registry, for the engines' real services).
 */
export class PullOnlyEngine {
  readonly pulls: RecordedPull[] = [];
  private readonly server = http.createServer((request, response) => this.answer(request, response));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `tcp://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://engine');
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/_ping') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('OK');
    } else if (request.method === 'GET' && url.pathname === '/containers/json') json(200, []);
    else if (request.method === 'GET' && /^\/images\/.+\/json$/.test(url.pathname))
      json(404, { message: `No such image: ${decodeURIComponent(url.pathname.slice(8, -5))}` });
    // Docker's check of access before a pull (ImageAccess.checkAccess): granted, so that the pull is what refuses.
    else if (request.method === 'GET' && /^\/distribution\/.+\/json$/.test(url.pathname))
      json(200, {
        Descriptor: {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: `sha256:${'0'.repeat(64)}`,
          size: 1,
        },
      });
    else if (request.method === 'POST' && url.pathname === '/images/create') {
      const header = request.headers['x-registry-auth'];
      this.pulls.push({
        fromImage: url.searchParams.get('fromImage'),
        tag: url.searchParams.get('tag'),
        auth: typeof header === 'string' ? JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) : undefined,
      });
      // Engines answer 200 and put a registry's refusal in the progress stream.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`${JSON.stringify({ status: `Pulling from ${url.searchParams.get('fromImage')}` })}\n`);
      const message = 'unauthorized: authentication required (test registry)';
      response.end(`${JSON.stringify({ errorDetail: { message }, error: message })}\n`);
    } else json(404, { message: `page not found: ${request.method} ${url.pathname}` });
  }
}
