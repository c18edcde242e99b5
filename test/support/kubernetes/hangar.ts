/**
 * A Hangar server whose sandbox is Kubernetes, on the Kubernetes API double (test/kubernetes/): its operator file's
 * one harness is a command of the JSON Lines protocol that answers the prompt in the pod, and sleeps first when the
 * prompt says so (a run that stays running until a test acts on it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BASE_IMAGE } from '../container-engines.js';
import { waitForSignalledRun } from '../engine.js';
import { startTestServer, type TestServer } from '../server.js';
import type { KubernetesDouble } from './double.js';

export const NAMESPACE = 'hangar-runs';

/** A command harness of the JSON Lines protocol, inline: it answers the prompt and, when asked, sleeps first. */
const HARNESS = [
  "const rl=require('readline').createInterface({input:process.stdin});",
  "rl.once('line',async(l)=>{const t=JSON.parse(l);const say=(e)=>process.stdout.write(JSON.stringify(e)+'\\n');",
  "say({type:'text',text:'pod says: '+t.prompt});",
  "if(t.prompt.includes('sleep'))await new Promise(r=>setTimeout(r,600000));",
  "say({type:'done',summary:'answered in the pod'});rl.close();});",
].join('');

/**
 * How long a pod may take from its Job to its worker's first report on a loaded machine: the runtime copy, then
 * Node loading Hangar (a bound, not a measurement: the tests wait on the run's state).
 */
export const POD_START_MS = 240_000;

/** Resolves once the run's agent is running in its pod; fails with the run's message if it ended first. */
export async function agentRunning(hangar: TestServer, runId: string): Promise<void> {
  const run = await waitForSignalledRun(
    hangar,
    runId,
    (candidate) => ['INPROGRESS', 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(candidate.state),
    POD_START_MS,
  );
  if (run.state !== 'INPROGRESS') throw new Error(`the run ended ${run.state}: ${JSON.stringify(run.status_message)}`);
}

export function ended(hangar: TestServer, runId: string) {
  return waitForSignalledRun(
    hangar,
    runId,
    (run) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state),
    POD_START_MS,
  );
}

/** A server whose sandbox is Kubernetes, on the double. */
export async function startKubernetesHangar(
  double: KubernetesDouble,
  runtimeImage: string,
  env: Record<string, string> = {},
): Promise<{ hangar: TestServer; directory: string }> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-kube-'));
  const operator = path.join(directory, 'hangar.yaml');
  fs.writeFileSync(
    operator,
    `default_harness: pod\nharnesses:\n  pod:\n    command: [node, -e, ${JSON.stringify(HARNESS)}]\n    timeout_minutes: 5\n`,
  );
  const hangar = await startTestServer({
    HANGAR_SANDBOX: 'kubernetes',
    HANGAR_CONFIG: operator,
    KUBECONFIG: double.writeKubeconfig(directory, NAMESPACE),
    HANGAR_KUBERNETES_NAMESPACE: NAMESPACE,
    HANGAR_KUBERNETES_RUNTIME_IMAGE: runtimeImage,
    HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
    HANGAR_RUN_LEASE_SECONDS: '4',
    ...env,
  });
  return { hangar, directory };
}
