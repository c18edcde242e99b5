import fs from 'node:fs';
import path from 'node:path';
import type { KubeObject } from './store.js';

/**
 * A pod's volumes as host directories its containers bind: an `emptyDir` is an empty directory, world-writable as
 * kubelet makes it (0777), shared by every container that mounts it; a `secret` volume holds one file per key
 * (the Secret's data decoded, mode from `defaultMode`). Other volume kinds are refused with the reason kubelet
 * would give; the double runs no volume plugins.
 */
export interface PodVolume {
  name: string;
  hostPath: string;
  readOnly: boolean;
}

export class VolumeError extends Error {}

export function prepareVolumes(
  pod: KubeObject,
  root: string,
  secret: (name: string) => KubeObject | undefined,
): PodVolume[] {
  const spec = pod.spec as { volumes?: Array<Record<string, unknown> & { name: string }> };
  const directory = path.join(root, pod.metadata.uid ?? 'pod');
  fs.mkdirSync(directory, { recursive: true });
  return (spec.volumes ?? []).map((volume) => {
    const hostPath = path.join(directory, volume.name);
    if (volume.emptyDir) {
      fs.mkdirSync(hostPath, { recursive: true });
      fs.chmodSync(hostPath, 0o777);
      return { name: volume.name, hostPath, readOnly: false };
    }
    if (volume.secret) {
      const source = volume.secret as {
        secretName?: string;
        optional?: boolean;
        defaultMode?: number;
        items?: Array<{ key: string; path: string; mode?: number }>;
      };
      const found = source.secretName ? secret(source.secretName) : undefined;
      if (!found && !source.optional)
        throw new VolumeError(
          `MountVolume.SetUp failed for volume "${volume.name}" : secret "${source.secretName}" not found`,
        );
      fs.mkdirSync(hostPath, { recursive: true });
      const data = (found?.data as Record<string, string> | undefined) ?? {};
      const items = source.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
      for (const item of items) {
        const value = data[item.key];
        if (value === undefined)
          throw new VolumeError(
            `MountVolume.SetUp failed for volume "${volume.name}" : references non-existent secret key: ${item.key}`,
          );
        const file = path.join(hostPath, item.path);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, Buffer.from(value, 'base64'), { mode: item.mode ?? source.defaultMode ?? 0o644 });
        fs.chmodSync(file, item.mode ?? source.defaultMode ?? 0o644);
      }
      fs.chmodSync(hostPath, 0o755);
      return { name: volume.name, hostPath, readOnly: true };
    }
    const kind = Object.keys(volume).find((key) => key !== 'name') ?? 'unknown';
    throw new VolumeError(
      `the Kubernetes double supports emptyDir and secret volumes, not ${kind} (volume "${volume.name}")`,
    );
  });
}

export function removeVolumes(pod: KubeObject, root: string): void {
  fs.rmSync(path.join(root, pod.metadata.uid ?? 'pod'), { recursive: true, force: true });
}
