import type { Redactor } from './redactor.js';

/** Media types whose bytes are text, redacted like any text (others are stored as they came). */
const TEXT_TYPE = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml)\b|[^;]*\+(json|xml)\b)/i;

/** The bytes of an uploaded artifact, redacted when they are text (by media type, or UTF-8 without NUL bytes). */
export function redactBytes(redactor: Redactor, bytes: Buffer, mediaType: string | undefined): Buffer {
  if (redactor.empty) return bytes;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes;
  }
  if (!(mediaType && TEXT_TYPE.test(mediaType.trim())) && text.includes('\0')) return bytes;
  const redacted = redactor.text(text);
  return redacted === text ? bytes : Buffer.from(redacted, 'utf8');
}
