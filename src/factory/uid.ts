import { newUid } from '../platform/crypto.js';

/**
 * A factory's UID: exactly 22 characters of [A-Za-z0-9], as newUid makes them. The routes under /factory/ mix
 * factories (`/factory/{uid}`, `/factory/{uid}/runs`) with static words (`/factory/webhooks`,
 * `/factory/automations`, ...); a static route wins over a parameter, so a factory whose UID were one of those
 * words could never be reached. No such word is 22 letters and digits long (test/factory/factory-api.test.ts checks
 * every route the server has), so a UID of this shape never collides, and a path segment of another shape is not
 * a factory.
 */
export const FACTORY_UID_PATTERN = '^[A-Za-z0-9]{22}$';
const SHAPE = new RegExp(FACTORY_UID_PATTERN);

export function isFactoryUid(value: string): boolean {
  return SHAPE.test(value);
}

export function newFactoryUid(): string {
  const uid = newUid();
  if (!isFactoryUid(uid)) throw new Error('newUid no longer makes the shape factory UIDs rely on');
  return uid;
}
