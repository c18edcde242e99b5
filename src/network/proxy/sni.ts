/**
 * The server name a TLS ClientHello asks for (RFC 6066 server_name), read from the first bytes of a tunnel without
 * opening anything: the proxy only needs to know that the name agrees with the CONNECT line.
 */

/** Not enough bytes yet to tell. */
export const NEED_MORE = Symbol('need more bytes');

export type ClientHelloName = { tls: false } | { tls: true; name: string | undefined } | typeof NEED_MORE;

/** The largest first record the proxy waits for: a ClientHello with post-quantum key shares fits well within it. */
export const MAX_HELLO_BYTES = 16 * 1024 + 5;

export function clientHelloName(data: Buffer): ClientHelloName {
  if (data.length < 1) return NEED_MORE;
  if (data[0] !== 0x16) return { tls: false };
  if (data.length < 5) return NEED_MORE;
  const recordLength = data.readUInt16BE(3);
  if (data.length < 5 + recordLength)
    return data.length >= MAX_HELLO_BYTES ? { tls: true, name: undefined } : NEED_MORE;
  const hello = data.subarray(5, 5 + recordLength);
  try {
    return { tls: true, name: serverName(hello) };
  } catch {
    return { tls: true, name: undefined };
  }
}

function serverName(hello: Buffer): string | undefined {
  if (hello[0] !== 0x01) return undefined; // not a ClientHello
  let offset = 4 + 2 + 32; // handshake header, client version, random
  offset += 1 + hello.readUInt8(offset); // session id
  offset += 2 + hello.readUInt16BE(offset); // cipher suites
  offset += 1 + hello.readUInt8(offset); // compression methods
  const end = offset + 2 + hello.readUInt16BE(offset);
  offset += 2;
  while (offset + 4 <= end) {
    const type = hello.readUInt16BE(offset);
    const length = hello.readUInt16BE(offset + 2);
    offset += 4;
    if (type === 0x0000) {
      // server_name_list: length, then entries of (type, length, name); host_name is type 0.
      let entry = offset + 2;
      while (entry + 3 <= offset + length) {
        const nameType = hello.readUInt8(entry);
        const nameLength = hello.readUInt16BE(entry + 1);
        if (nameType === 0) return hello.toString('ascii', entry + 3, entry + 3 + nameLength).toLowerCase();
        entry += 3 + nameLength;
      }
      return undefined;
    }
    offset += length;
  }
  return undefined;
}
