import { useState } from 'react';
import { seg } from '../api/client';
import type { Artifact, RunArtifact } from '../api/types';
import { useAction } from '../hooks';
import { useClient } from '../session';
import { ErrorMessage, Time } from './ui';

function size(bytes: unknown): string {
  if (typeof bytes !== 'number') return '';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function ArtifactItem({ artifact }: { artifact: RunArtifact }) {
  const client = useClient();
  const action = useAction();
  const [plan, setPlan] = useState<string>();
  const data = artifact.data;
  const uid = typeof data.artifact_uid === 'string' ? data.artifact_uid : undefined;
  const url = typeof data.url === 'string' ? data.url : undefined;
  const name = String(data.filename ?? data.title ?? data.description ?? url ?? artifact.artifact_type);

  const download = () =>
    action.run(async () => {
      // The artifact's read carries a download link signed for 10 minutes (no API key needed to follow it).
      const full = await client.get<Artifact>(`/agent/artifacts/${seg(uid!)}`);
      const href = full.data.download_url;
      if (typeof href !== 'string' || !href) throw new Error('Hangar gave no download link for this artifact');
      const link = document.createElement('a');
      link.href = href;
      link.download = String(full.data.filename ?? '');
      document.body.append(link);
      link.click();
      link.remove();
    });

  const showPlan = () =>
    action.run(async () => {
      const full = await client.get<Artifact>(`/agent/artifacts/${seg(uid!)}`);
      setPlan(String(full.data.content ?? ''));
    });

  return (
    <li className="artifact">
      <span className="badge">{artifact.artifact_type.replace('_', ' ').toLowerCase()}</span>{' '}
      {url && (artifact.artifact_type === 'PULL_REQUEST' || artifact.artifact_type === 'EXTERNAL_REFERENCE') ? (
        <a href={url} target="_blank" rel="noopener noreferrer">
          {String(data.title ?? url)}
        </a>
      ) : (
        <span>{name}</span>
      )}
      {typeof data.branch === 'string' && <span className="muted"> · branch {data.branch}</span>}
      {data.size_bytes !== undefined && <span className="muted"> · {size(data.size_bytes)}</span>}
      <span className="muted">
        {' · '}
        <Time value={artifact.created_at} />
      </span>
      {uid && (artifact.artifact_type === 'FILE' || artifact.artifact_type === 'SCREENSHOT') && (
        <button
          type="button"
          className="link-button"
          onClick={download}
          disabled={action.pending}
          aria-label={`Download ${name}`}
        >
          Download
        </button>
      )}
      {uid && artifact.artifact_type === 'PLAN' && plan === undefined && (
        <button type="button" className="link-button" onClick={showPlan} disabled={action.pending}>
          Show plan
        </button>
      )}
      {plan !== undefined && <pre className="plan">{plan}</pre>}
      <ErrorMessage error={action.error} />
    </li>
  );
}

export function ArtifactList({ artifacts }: { artifacts: RunArtifact[] }) {
  if (artifacts.length === 0) return <p className="muted">No artifacts reported.</p>;
  return (
    <ul className="artifacts">
      {artifacts.map((artifact, index) => (
        <ArtifactItem key={String(artifact.data.artifact_uid ?? index)} artifact={artifact} />
      ))}
    </ul>
  );
}
