import { hashApiKey, randomBase62 } from '../../platform/crypto.js';

/** Every share link's secret starts with this, so a leaked one is recognisable (and told apart from an API key). */
export const SHARE_SECRET_PREFIX = 'hgs_';
/** 40 characters of [A-Za-z0-9]: about 238 bits, beyond guessing. */
const SECRET_LENGTH = 40;
const SECRET = new RegExp(`^${SHARE_SECRET_PREFIX}[A-Za-z0-9]{${SECRET_LENGTH}}$`);

export function generateShareSecret(): string {
  return SHARE_SECRET_PREFIX + randomBase62(SECRET_LENGTH);
}

/** Whether the text has a share secret's shape (a malformed one is refused without a database look-up). */
export function isShareSecret(text: string): boolean {
  return SECRET.test(text);
}

/** What is stored of a secret: its SHA-256 (a secret of 238 random bits needs no slow hash). */
export function hashShareSecret(secret: string): string {
  return hashApiKey(secret);
}

/** The dashboard page a link opens: the secret after `#`, which browsers send to no server (no log, no Referer). */
export function shareUrl(publicUrl: string, secret: string): string {
  return `${publicUrl}/shared/run#${secret}`;
}
