/** The timeline payload of an `agent_progress` event, from the protocol event or the harness-support call. */
export function progressPayload(progress: { message: string; percent?: number | undefined }): Record<string, unknown> {
  return { message: progress.message, ...(progress.percent !== undefined ? { percent: progress.percent } : {}) };
}
