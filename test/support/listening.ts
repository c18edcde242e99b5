import fs from 'node:fs';

/**
 * Whether process `pid` holds a TCP socket listening on `port` (read from Linux's /proc).
 *
 * A test that starts `hangar serve` on a port picked in advance (freePort) and polls it until it answers cannot tell
 * from the answer alone whose server it is: between the pick and the child's listen, another test's server may have
 * been given the same port by the kernel, and then the foreign server answers (with its own database: a 401 for
 * this test's key) while the child fails with EADDRINUSE. The socket's owner settles it.
 */
export function listensOn(pid: number, port: number): boolean {
  const inodes = socketInodes(pid);
  if (inodes.size === 0) return false;
  return ['/proc/net/tcp', '/proc/net/tcp6'].some((table) =>
    listeningInodes(table, port).some((inode) => inodes.has(inode)),
  );
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  let descriptors: string[];
  try {
    descriptors = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const descriptor of descriptors) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${descriptor}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** The inodes of the sockets in LISTEN state (0A) on `port`, from a /proc/net/tcp-style table. */
function listeningInodes(table: string, port: number): string[] {
  let text: string;
  try {
    text = fs.readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return text
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A')
    .map((fields) => fields[9]!);
}
