/**
 * The few DNS messages the proxy's resolver reads and writes (RFC 1035): one question in, its A or AAAA answers out,
 * or NXDOMAIN for a name the run may not reach. Nothing else of DNS is spoken: the resolver is not a forwarder.
 */

export interface Question {
  id: number;
  name: string;
  type: number;
  /** The question section as sent, echoed in the answer. */
  section: Buffer;
  recursionDesired: boolean;
}

export const TYPE_A = 1;
export const TYPE_AAAA = 28;
const RCODE_NXDOMAIN = 3;
const RCODE_FORMERR = 1;

/** The one question of a query, or undefined when the message is not a plain query. */
export function readQuestion(message: Buffer): Question | undefined {
  if (message.length < 12) return undefined;
  const flags = message.readUInt16BE(2);
  if (flags & 0x8000 || message.readUInt16BE(4) !== 1) return undefined; // a response, or not one question
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return undefined; // compression has no place in a question
    offset += 1;
    if (length === 0) break;
    labels.push(message.toString('ascii', offset, offset + length));
    offset += length;
  }
  if (offset + 4 > message.length) return undefined;
  return {
    id: message.readUInt16BE(0),
    name: labels.join('.').toLowerCase(),
    type: message.readUInt16BE(offset),
    section: message.subarray(12, offset + 4),
    recursionDesired: (flags & 0x0100) !== 0,
  };
}

function header(question: Question, rcode: number, answers: number): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(question.id, 0);
  head.writeUInt16BE(0x8000 | 0x0080 | (question.recursionDesired ? 0x0100 : 0) | rcode, 2); // QR, RA, RD
  head.writeUInt16BE(1, 4);
  head.writeUInt16BE(answers, 6);
  return head;
}

/** The answer carrying `addresses` (IPv4 for A, IPv6 for AAAA; the others left out), with a short TTL. */
export function answer(question: Question, addresses: string[]): Buffer {
  const records = addresses.map((address) => {
    const data = question.type === TYPE_A ? ipv4Bytes(address) : ipv6Bytes(address);
    const record = Buffer.alloc(12);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(question.type, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(30, 6);
    record.writeUInt16BE(data.length, 10);
    return Buffer.concat([record, data]);
  });
  return Buffer.concat([header(question, 0, records.length), question.section, ...records]);
}

export function nameError(question: Question): Buffer {
  return Buffer.concat([header(question, RCODE_NXDOMAIN, 0), question.section]);
}

export function formatError(message: Buffer): Buffer | undefined {
  if (message.length < 2) return undefined;
  const head = Buffer.alloc(12);
  head.writeUInt16BE(message.readUInt16BE(0), 0);
  head.writeUInt16BE(0x8000 | RCODE_FORMERR, 2);
  return head;
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  for (const [index, group] of groups.entries()) bytes.writeUInt16BE(Number.parseInt(group, 16), index * 2);
  return bytes;
}
