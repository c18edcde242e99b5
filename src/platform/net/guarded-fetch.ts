import dns from 'node:dns/promises';
import net from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import type { AddressPolicy } from './address-policy.js';

/** A connection the address policy refused; found in a failed fetch's `cause`. */
export class AddressRefused extends Error {
  override name = 'AddressRefused';
}

/** The address refusal behind a failed request, if that is what failed it. */
export function addressRefusal(error: unknown): AddressRefused | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof AddressRefused) return cause;
  }
  return undefined;
}

/**
 * The address a connection goes to: the literal, or the name's first address, after checking every address it
 * resolves to. The socket then connects to exactly that address, so a name that resolves to a public address when
 * checked and to 127.0.0.1 a moment later (DNS rebinding) gains nothing.
 */
async function checkedAddress(policy: AddressPolicy, hostname: string): Promise<string> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) !== 0) {
    const refusal = policy.refusalOf(host);
    if (refusal) throw new AddressRefused(refusal);
    return host;
  }
  const addresses = await dns.lookup(host, { all: true, verbatim: true });
  if (!policy.allowsName(host)) {
    for (const { address } of addresses) {
      const refusal = policy.refusalOf(address);
      if (refusal) throw new AddressRefused(`${host} resolves to ${refusal}`);
    }
  }
  const first = addresses[0];
  if (!first) throw new Error(`${host} has no address`);
  return first.address;
}

/**
 * An undici dispatcher for the server's own requests on a run's behalf: every connection (redirects included) is
 * checked against `policy` at connect time, on the address actually connected to. TLS still verifies the name.
 */
export function guardedDispatcher(policy: AddressPolicy): Agent {
  const connect = buildConnector({});
  return new Agent({
    connect: (options, callback) => {
      checkedAddress(policy, options.hostname).then(
        (address) => {
          const name = options.hostname.replace(/^\[(.*)\]$/, '$1');
          connect(
            {
              ...options,
              hostname: address,
              servername: options.servername ?? (net.isIP(name) === 0 ? name : undefined),
            },
            callback,
          );
        },
        (error: Error) => callback(error, null),
      );
    },
  });
}

/** `fetch` over a guarded dispatcher (see guardedDispatcher). */
export function guardedFetch(policy: AddressPolicy): typeof fetch {
  const dispatcher = guardedDispatcher(policy);
  return ((input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) =>
    undiciFetch(input, { ...init, dispatcher })) as unknown as typeof fetch;
}
