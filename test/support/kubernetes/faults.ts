import type { KubeObject } from './store.js';

/**
 * The cluster's misfortunes a test can script, read by the scheduler (kubelet.ts) and the image checks:
 * - unschedulable pods: matching pods stay Pending with PodScheduled False (Unschedulable) until released;
 * - missing images: an image treated as absent even when Podman holds it (ErrImagePull, then ImagePullBackOff).
 * A node lost, an OOM kill, an expired watch and RBAC refusals act at once and live on the double itself.
 */
export interface UnschedulableRule {
  matches: (pod: KubeObject) => boolean;
  message: string;
  released: Promise<void>;
  release: () => void;
}

export class Faults {
  private readonly unschedulable: UnschedulableRule[] = [];
  readonly missingImages = new Set<string>();

  /**
   * Pods that match stay unschedulable, with the scheduler's message (default: not enough CPU), until
   * `release()`; then the scheduler places them as usual.
   */
  makeUnschedulable(options: { matches?: (pod: KubeObject) => boolean; message?: string } = {}): {
    release: () => void;
  } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const rule: UnschedulableRule = {
      matches: options.matches ?? (() => true),
      message:
        options.message ??
        '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
      released,
      release: () => {
        this.unschedulable.splice(this.unschedulable.indexOf(rule), 1);
        release();
      },
    };
    this.unschedulable.push(rule);
    return { release: rule.release };
  }

  unschedulableRule(pod: KubeObject): UnschedulableRule | undefined {
    return this.unschedulable.find((rule) => rule.matches(pod));
  }

  /** Makes pulls of `image` fail as if no registry had it. */
  failImagePull(image: string): void {
    this.missingImages.add(image);
  }
}
