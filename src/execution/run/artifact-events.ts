import path from 'node:path';
import mime from 'mime-types';
import type { RunExecution } from '../../artifacts/index.js';
import { ApiError } from '../../platform/http/errors.js';
import type { HarnessEvent } from '../../runs/index.js';
import { WorkspaceFiles, WorkspacePathError, workspaceRelative } from '../workspace/files.js';
import type { ArtifactSink } from './ledger.js';

type ArtifactEvent = Extract<HarnessEvent, { type: 'artifact' }>;

/**
 * Records an `artifact` event of the harness protocol through the artifacts slice, as the harness-support calls
 * would. FILE and SCREENSHOT events name a file in the workspace (`data.path`), which is read from there.
 * Resolves to the reason when the artifact is refused (the run goes on; the reason goes on its timeline).
 */
export async function recordArtifactEvent(
  artifacts: ArtifactSink,
  run: RunExecution,
  workspace: string,
  event: ArtifactEvent,
  maxBytes: number,
): Promise<string | null> {
  try {
    if (event.artifact_type !== 'FILE' && event.artifact_type !== 'SCREENSHOT') {
      await artifacts.report(run, {
        artifact_type: event.artifact_type,
        data: event.data,
        visibility: event.visibility,
      });
      return null;
    }
    const relative = event.data.path;
    if (typeof relative !== 'string' || relative === '')
      return `${event.artifact_type}: data.path must name a file in the workspace`;
    const file = await workspaceFile(workspace, relative, maxBytes);
    if (typeof file === 'string') return `${event.artifact_type} ${relative}: ${file}`;
    const mimeType =
      typeof event.data.mime_type === 'string'
        ? event.data.mime_type
        : mime.lookup(relative) || 'application/octet-stream';
    const description = typeof event.data.description === 'string' ? event.data.description.slice(0, 2000) : undefined;
    const filename = typeof event.data.filename === 'string' ? event.data.filename : path.basename(relative);
    await artifacts.upload(
      run,
      { artifact_type: event.artifact_type, filename, filepath: relative, description, visibility: event.visibility },
      file,
      mimeType,
    );
    return null;
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return error.message;
    throw error;
  }
}

/**
 * The bytes of a regular file inside the workspace, or why not. Links are resolved beneath the workspace root only
 * (see workspace/files.ts); the reason never depends on anything outside the workspace.
 */
async function workspaceFile(workspace: string, relative: string, maxBytes: number): Promise<Buffer | string> {
  try {
    const inside = workspaceRelative(workspace, relative);
    return await WorkspaceFiles.with(workspace, undefined, (files) =>
      files.readFile(inside, { follow: true, maxBytes }),
    );
  } catch (error) {
    if (!(error instanceof WorkspacePathError)) throw error;
    return error.reason === 'too-large' ? `${error.detail} (HANGAR_MAX_ARTIFACT_BYTES)` : error.detail;
  }
}
