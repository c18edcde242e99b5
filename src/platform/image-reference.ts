/**
 * Container image references (registry/name:tag or registry/name@digest), as Docker's distribution/reference grammar
 * reads them, and never an image ID: the engines also take an ID, a unique prefix of one (`3`) or `sha256:<id>` where a
 * reference goes, which names whatever image the engine holds, whoever pulled or committed it (issue 47.2). The
 * environments check what an environment names with it, and the container sandbox what it pulls.
 */

/** Where setup snapshots' images are committed (src/execution/sandbox/container/snapshot-images.ts): Hangar's alone. */
export const SNAPSHOT_REPOSITORY = 'localhost/hangar-snapshot';

export interface ImageReference {
  /** The registry (`ghcr.io`, `registry:5000`, `localhost`); undefined: Docker Hub. */
  domain?: string;
  /** The repository's path in it (`acme/web`). */
  path: string;
  tag?: string;
  digest?: string;
}

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN =
  /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}$/;
const EXAMPLES = 'e.g. ubuntu:24.04, ghcr.io/acme/web:1.2 or ghcr.io/acme/web@sha256:<digest>';

/** The reference `value` is, or why it is not one (an image ID among the reasons). */
export function parseImageReference(value: string): ImageReference | { problem: string } {
  const notReference = { problem: `"${value}" is not an image reference (${EXAMPLES})` };
  const asId = {
    problem: `"${value}" names an image by its ID (or a prefix of one); name it by reference instead (${EXAMPLES})`,
  };
  if (value.length === 0 || value.length > 512) return notReference;
  if (/^sha(256|384|512):/i.test(value)) return asId;
  let rest = value;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return notReference;
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return notReference;
  }
  const slash = rest.indexOf('/');
  const first = slash === -1 ? '' : rest.slice(0, slash);
  // Docker's rule for the registry: a first component with a dot or a port, `localhost`, or capitals.
  const domain =
    first && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())
      ? first
      : undefined;
  const path = domain ? rest.slice(slash + 1) : rest;
  if ((domain && !DOMAIN.test(domain)) || path.length > 255) return notReference;
  const components = path.split('/');
  if (!components.every((component) => PATH_COMPONENT.test(component))) return notReference;
  // A lone hexadecimal name with nothing else is what the engines read as an ID prefix (`3`, `19877d6c`).
  if (!domain && components.length === 1 && /^[0-9a-f]+$/.test(path) && (!tag || path.length === 64) && !digest)
    return asId;
  return { ...(domain ? { domain } : {}), path, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/**
 * Why an environment may not name `value` as its image: not a reference, an ID, or Hangar's own setup snapshots'
 * repository (they hold another team's setup; Hangar reaches them only for the snapshot's own team, by its record).
 */
export function environmentImageProblem(value: string): string | undefined {
  const parsed = parseImageReference(value);
  if ('problem' in parsed) return parsed.problem;
  const [repository] = SNAPSHOT_REPOSITORY.split('/').slice(-1);
  if ((parsed.domain === undefined || parsed.domain === 'localhost') && parsed.path.split('/').at(-1) === repository)
    return `"${value}" is in ${SNAPSHOT_REPOSITORY}, where Hangar keeps setup snapshots; an environment cannot name one`;
  return undefined;
}

/**
 * The reference with nothing left for an engine to guess: Docker Hub's domain and `library/` said, and `latest` when
 * neither a tag nor a digest is. Both engines' Docker-compatible APIs read a short name this way (Podman's
 * compat_api_enforce_docker_hub), so the image is the same; what changes is that an ID prefix or another registry's
 * image can no longer be what the engine matches.
 */
export function qualifiedReference(reference: ImageReference): string {
  const domain = reference.domain ?? 'docker.io';
  const path = domain === 'docker.io' && !reference.path.includes('/') ? `library/${reference.path}` : reference.path;
  const tag = reference.tag ?? (reference.digest ? undefined : 'latest');
  return `${domain}/${path}${tag ? `:${tag}` : ''}${reference.digest ? `@${reference.digest}` : ''}`;
}

/** An image only the engine's own store holds (imported, committed, loaded): Podman's `localhost/`, never pulled. */
export function isLocalImage(reference: ImageReference): boolean {
  return reference.domain === 'localhost';
}
