import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { AnthropicServer } from './model-servers/index.js';
import { startTestServer, type TestServer } from './server.js';

const SCRIPT_HARNESS = fileURLToPath(new URL('./script-harness.mjs', import.meta.url));
const MODEL_KEY_ENV = 'SPEND_TEST_MODEL_KEY';

export interface SpendStack {
  hangar: TestServer;
  /** The scripted model server: 100k input tokens a step cost 0.30 USD at the model's 3 USD per million. */
  anthropic: AnthropicServer;
  stop(): Promise<void>;
}

/**
 * A server for spend tests: oz on the model `sonnet-test` (a scripted Anthropic server, input at 3 USD and output
 * at 15 USD per million tokens) and the `script` command harness (0.01 USD per usage step). `env` adds settings.
 */
export async function startSpendServer(env: Record<string, string> = {}): Promise<SpendStack> {
  const anthropic = new AnthropicServer();
  await anthropic.listen();
  const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-spend-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_harness: 'oz',
      builtin_harnesses: { oz: { max_steps: 10 } },
      harnesses: { script: { command: [process.execPath, SCRIPT_HARNESS] } },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-sonnet-4-20250514',
          base_url: anthropic.baseURL,
          api_key_env: MODEL_KEY_ENV,
          cost: { input: 3, output: 15 },
        },
      ],
    }),
  );
  const hangar = await startTestServer({ HANGAR_CONFIG: file, [MODEL_KEY_ENV]: 'sk-spend-test', ...env });
  return {
    hangar,
    anthropic,
    async stop() {
      await hangar.stop();
      await anthropic.close();
      fs.rmSync(configDirectory, { recursive: true, force: true });
    },
  };
}
