import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxedProcess, SandboxSpawnOptions } from '../../sandbox/backend.js';
import { spawnSandboxed } from '../../sandbox/index.js';

/**
 * The MCP stdio transport over a sandboxed process: a stdio MCP server a run asks for is a program like the
 * harness itself, so it runs confined the same way (the SDK's own stdio transport would spawn it bare). Messages
 * are newline-delimited JSON-RPC on stdin and stdout; stderr is the server's log.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: SandboxedProcess | undefined;

  constructor(
    private readonly spawn: Omit<SandboxSpawnOptions, 'keepStdinOpen' | 'stdinText'>,
    private readonly onLog: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    const child = spawnSandboxed({ ...this.spawn, keepStdinOpen: true });
    this.child = child;
    child.onStdoutLine((line) => {
      if (line.trim() === '') return;
      try {
        this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)));
      } catch (error) {
        this.onerror?.(
          new Error(`the MCP server wrote a line that is not a JSON-RPC message: ${(error as Error).message}`),
        );
      }
    });
    child.onStderrLine(this.onLog);
    void child.exited.then(() => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.child?.write(`${JSON.stringify(message)}\n`)) throw new Error('the MCP server is not running');
  }

  async close(): Promise<void> {
    await this.child?.kill(500);
  }
}
