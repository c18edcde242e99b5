import ipaddr from 'ipaddr.js';
import { schemaCauses } from './schema.js';
import type { StatusCause } from './status.js';
import type { KubeObject } from './store.js';

/**
 * What the API server checks beyond the OpenAPI schema, for the kinds the double serves: names, labels, a pod
 * spec's containers, volumes and mounts, a Job's restart policy and counts, a Secret's keys. The rules and their
 * wording are the API server's (k8s.io/apimachinery validation); only the ones a Job-running client meets are here.
 */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

export function validateObject(input: KubeObject): StatusCause[] {
  const object = withoutBase64LineBreaks(input);
  const causes = schemaCauses(object);
  if (causes.length > 0) return causes;
  causes.push(...metadataCauses(object));
  const spec = object.spec as Record<string, unknown> | undefined;
  switch (object.kind) {
    case 'Pod':
      causes.push(...podSpecCauses(spec ?? {}, 'spec', false));
      break;
    case 'Job':
      causes.push(...jobCauses(spec ?? {}));
      break;
    case 'Secret':
      causes.push(...secretCauses(object));
      break;
    case 'NetworkPolicy':
      causes.push(...networkPolicyCauses(spec ?? {}));
      break;
  }
  return causes;
}

function metadataCauses(object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const { name, generateName, labels, annotations } = object.metadata;
  if (!name && !generateName)
    causes.push({
      reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required',
      field: 'metadata.name',
    });
  // Pods, Jobs and the rest take DNS subdomains; a Job's name also becomes its pods' job-name label (63 at most).
  const maximum = object.kind === 'Job' ? 63 : 253;
  if (name && (!DNS_SUBDOMAIN.test(name) || name.length > maximum))
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character${name.length > maximum ? ` (must be no more than ${maximum} characters)` : ''}`,
      field: 'metadata.name',
    });
  causes.push(...labelCauses(labels, 'metadata.labels'));
  const annotationBytes = Object.entries(annotations ?? {}).reduce(
    (sum, [key, value]) => sum + key.length + value.length,
    0,
  );
  if (annotationBytes > 256 * 1024)
    causes.push({
      reason: 'FieldValueTooLong',
      message: 'Too long: must have at most 262144 bytes',
      field: 'metadata.annotations',
    });
  return causes;
}

export function labelCauses(labels: Record<string, string> | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const slash = key.lastIndexOf('/');
    const prefix = slash >= 0 ? key.slice(0, slash) : '';
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    if ((prefix && (!DNS_SUBDOMAIN.test(prefix) || prefix.length > 253)) || !LABEL_NAME.test(name) || name.length > 63)
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        field,
      });
    if (!LABEL_VALUE.test(value) || value.length > 63)
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (must be no more than 63 characters)`,
        field: `${field}`,
      });
  }
  return causes;
}

type Container = {
  name?: string;
  image?: string;
  volumeMounts?: Array<{ name?: string; mountPath?: string }>;
  env?: Array<{ name?: string }>;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
};

export function podSpecCauses(spec: Record<string, unknown>, path: string, inJob: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const containers = (spec.containers as Container[] | undefined) ?? [];
  const initContainers = (spec.initContainers as Container[] | undefined) ?? [];
  const volumes = (spec.volumes as Array<{ name?: string }> | undefined) ?? [];
  if (containers.length === 0)
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${path}.containers` });
  const volumeNames = new Set<string>();
  volumes.forEach((volume, index) => {
    const field = `${path}.volumes[${index}].name`;
    if (!volume.name || !DNS_LABEL.test(volume.name))
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${volume.name ?? ''}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
        field,
      });
    else if (volumeNames.has(volume.name))
      causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: "${volume.name}"`, field });
    else volumeNames.add(volume.name);
  });
  const containerNames = new Set<string>();
  for (const [list, listName] of [
    [initContainers, 'initContainers'],
    [containers, 'containers'],
  ] as const) {
    list.forEach((container, index) => {
      const at = `${path}.${listName}[${index}]`;
      if (!container.name || !DNS_LABEL.test(container.name) || container.name.length > 63)
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: "${container.name ?? ''}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
          field: `${at}.name`,
        });
      else if (containerNames.has(container.name))
        causes.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${container.name}"`,
          field: `${at}.name`,
        });
      else containerNames.add(container.name);
      if (!container.image)
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${at}.image` });
      const mountPaths = new Set<string>();
      (container.volumeMounts ?? []).forEach((mount, mountIndex) => {
        const mountAt = `${at}.volumeMounts[${mountIndex}]`;
        if (!mount.name || !volumeNames.has(mount.name))
          causes.push({
            reason: 'FieldValueNotFound',
            message: `Not found: "${mount.name ?? ''}"`,
            field: `${mountAt}.name`,
          });
        if (!mount.mountPath)
          causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${mountAt}.mountPath` });
        else if (mountPaths.has(mount.mountPath))
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${mount.mountPath}": must be unique`,
            field: `${mountAt}.mountPath`,
          });
        else mountPaths.add(mount.mountPath);
      });
      (container.env ?? []).forEach((variable, envIndex) => {
        if (!variable.name || variable.name.includes('='))
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${variable.name ?? ''}": a valid environment variable name must consist only of printable ASCII characters other than '='`,
            field: `${at}.env[${envIndex}].name`,
          });
      });
    });
  }
  const restartPolicy = spec.restartPolicy as string | undefined;
  if (inJob && restartPolicy !== 'Never' && restartPolicy !== 'OnFailure')
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: "${restartPolicy ?? 'Always'}": supported values: "OnFailure", "Never"`,
      field: `${path}.restartPolicy`,
    });
  return causes;
}

function jobCauses(spec: Record<string, unknown>): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const field of ['backoffLimit', 'ttlSecondsAfterFinished', 'parallelism', 'completions'] as const) {
    const value = spec[field];
    if (typeof value === 'number' && value < 0)
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value}: must be greater than or equal to 0`,
        field: `spec.${field}`,
      });
  }
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && deadline <= 0)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${deadline}: must be greater than 0`,
      field: 'spec.activeDeadlineSeconds',
    });
  const template =
    (spec.template as { metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> }) ?? {};
  causes.push(...labelCauses(template.metadata?.labels, 'spec.template.metadata.labels'));
  causes.push(...podSpecCauses(template.spec ?? {}, 'spec.template.spec', true));
  return causes;
}

function secretCauses(object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  let bytes = 0;
  for (const [key, value] of Object.entries((object.data as Record<string, string> | undefined) ?? {})) {
    if (!SECRET_KEY.test(key))
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
        field: `data[${key}]`,
      });
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value))
      causes.push({
        reason: 'FieldValueInvalid',
        message: 'Invalid value: illegal base64 data',
        field: `data[${key}]`,
      });
    bytes += Buffer.from(value, 'base64').length;
  }
  for (const [key, value] of Object.entries((object.stringData as Record<string, string> | undefined) ?? {})) {
    if (!SECRET_KEY.test(key))
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
        field: `stringData[${key}]`,
      });
    bytes += Buffer.byteLength(value);
  }
  if (bytes > 1024 * 1024)
    causes.push({ reason: 'FieldValueTooLong', message: 'Too long: must have at most 1048576 bytes', field: 'data' });
  return causes;
}

type Peer = { ipBlock?: { cidr: string; except?: string[] } };
type Rule = {
  to?: Peer[];
  from?: Peer[];
  ports?: Array<{ protocol?: string; port?: number | string; endPort?: number }>;
};

/** A NetworkPolicy's CIDRs (and their exceptions, inside them), ports and policy types, as the API server checks. */
function networkPolicyCauses(spec: Record<string, unknown>): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [index, type] of ((spec.policyTypes as string[] | undefined) ?? []).entries())
    if (type !== 'Ingress' && type !== 'Egress')
      causes.push({
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: "${type}": supported values: "Ingress", "Egress"`,
        field: `spec.policyTypes[${index}]`,
      });
  for (const direction of ['ingress', 'egress'] as const)
    for (const [ruleIndex, rule] of ((spec[direction] as Rule[] | undefined) ?? []).entries()) {
      const at = `spec.${direction}[${ruleIndex}]`;
      for (const [peerIndex, peer] of (rule[direction === 'egress' ? 'to' : 'from'] ?? []).entries()) {
        if (!peer.ipBlock) continue;
        const field = `${at}.${direction === 'egress' ? 'to' : 'from'}[${peerIndex}].ipBlock`;
        const block = parseCidr(peer.ipBlock.cidr);
        if (!block) {
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${peer.ipBlock.cidr}": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
            field: `${field}.cidr`,
          });
          continue;
        }
        for (const [exceptIndex, except] of (peer.ipBlock.except ?? []).entries()) {
          const inner = parseCidr(except);
          const inside = inner && inner[0].kind() === block[0].kind() && inner[1] >= block[1] && inner[0].match(block);
          if (!inside)
            causes.push({
              reason: 'FieldValueInvalid',
              message: `Invalid value: "${except}": must be a strict subset of \`cidr\``,
              field: `${field}.except[${exceptIndex}]`,
            });
        }
      }
      for (const [portIndex, port] of (rule.ports ?? []).entries()) {
        const field = `${at}.ports[${portIndex}]`;
        if (port.protocol && !['TCP', 'UDP', 'SCTP'].includes(port.protocol))
          causes.push({
            reason: 'FieldValueNotSupported',
            message: `Unsupported value: "${port.protocol}": supported values: "SCTP", "TCP", "UDP"`,
            field: `${field}.protocol`,
          });
        if (typeof port.port === 'number' && (port.port < 1 || port.port > 65535))
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${port.port}: must be between 1 and 65535, inclusive`,
            field: `${field}.port`,
          });
        if (port.endPort !== undefined && (typeof port.port !== 'number' || port.endPort < port.port))
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${port.endPort}: must be greater than or equal to \`port\``,
            field: `${field}.endPort`,
          });
      }
    }
  return causes;
}

function parseCidr(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  try {
    return ipaddr.parseCIDR(text);
  } catch {
    return undefined;
  }
}

/** The API server decodes base64 as Go does, skipping line breaks (kustomize wraps a Secret's data at 70 columns). */
function withoutBase64LineBreaks(object: KubeObject): KubeObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(
    Object.entries(object.data as Record<string, string>).map(([key, value]) => [
      key,
      String(value).replace(/[\r\n]/g, ''),
    ]),
  );
  return { ...object, data };
}
