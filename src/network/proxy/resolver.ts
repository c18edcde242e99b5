import dgram from 'node:dgram';
import { namesHost } from '../rules.js';
import { answer, formatError, nameError, readQuestion, TYPE_A, TYPE_AAAA } from './dns-message.js';
import type { LeaseContext } from './lease-proxy.js';

/**
 * One lease's resolver: it answers A and AAAA questions for the names the phase's rules allow, with only the
 * addresses a run may reach, and NXDOMAIN for every other name (recorded as a refusal, so that a tool which ignores
 * the proxy variables and resolves for itself shows in the account too). The sandbox's rules send DNS nowhere else.
 */
export function leaseResolver(context: LeaseContext): dgram.Socket {
  const socket = dgram.createSocket(context.request.bind.includes(':') ? 'udp6' : 'udp4');
  socket.on('message', (message, peer) => {
    void reply(context, message).then(
      (out) => out && socket.send(out, peer.port, peer.address),
      () => undefined,
    );
  });
  return socket;
}

async function reply(context: LeaseContext, message: Buffer): Promise<Buffer | undefined> {
  const question = readQuestion(message);
  if (!question) return formatError(message);
  const name = question.name.replace(/\.$/, '');
  if (!namesHost(context.request.rules, name)) {
    context.refuse({
      host: name,
      reason: 'not_allowed',
      detail: `a DNS question for a name not on the ${context.request.phase} allow list`,
    });
    return nameError(question);
  }
  if (question.type !== TYPE_A && question.type !== TYPE_AAAA) return answer(question, []);
  const reachable = await context.upstream.reachable(name, question.type === TYPE_A ? 4 : 6);
  if (reachable.refusal) {
    context.refuse({ host: name, reason: 'private_address', detail: `it resolves to ${reachable.refusal}` });
    return nameError(question);
  }
  return answer(question, reachable.addresses);
}
