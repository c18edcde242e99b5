import type { Command } from 'commander';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callAndPrint, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { DeliveryItem, WebhookItem } from './schemas.js';
import { SIGNATURE_SCHEME_NAMES } from './schemes/names.js';

const path = (uid: string, action = '') => `/factory/webhooks/${encodeURIComponent(uid)}${action}`;

interface WebhookOptions {
  name?: string;
  authMode?: string;
  scheme?: string;
  secret?: string;
  secretName?: string;
  deliveryIdHeader?: string;
  factory?: string;
  disabled?: boolean;
}

function body(options: WebhookOptions) {
  return {
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.authMode !== undefined ? { auth_mode: options.authMode } : {}),
    ...(options.scheme !== undefined ? { auth_mode: 'signature', signature_scheme: options.scheme } : {}),
    ...(options.secret !== undefined ? { secret: options.secret } : {}),
    ...(options.secretName !== undefined ? { secret_name: options.secretName } : {}),
    ...(options.deliveryIdHeader !== undefined ? { delivery_id_header: options.deliveryIdHeader } : {}),
    ...(options.factory !== undefined ? { factory_uid: options.factory } : {}),
    ...(options.disabled ? { enabled: false } : {}),
  };
}

/** A webhook with a freshly issued secret: the secret is printed once, with a warning to keep it. */
function printIssued(item: WebhookItem): void {
  show(item);
  if (item.secret !== undefined)
    process.stderr.write('\nThe secret above is shown only this once: store it with the sender now.\n');
}

/** `hangar webhooks ...`: custom webhooks and their delivery logs (HANGAR_URL, HANGAR_API_KEY). */
export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('manage custom webhooks that start automation runs');
  webhooks
    .command('list')
    .description('list webhooks with their URL')
    .addHelpText('after', '\nExamples:\n  $ hangar webhooks list\n')
    .action(async () => {
      const result = await callApi<{ webhooks: WebhookItem[] }>(clientOptionsFromEnv(), 'GET', '/factory/webhooks');
      show(result, ({ webhooks }) =>
        table(
          webhooks,
          [
            { header: 'UID', value: (item) => item.uid },
            { header: 'NAME', value: (item) => item.name },
            { header: 'ENABLED', value: (item) => (item.enabled ? 'yes' : 'no') },
            {
              header: 'AUTHENTICATION',
              value: (item) => (item.auth_mode === 'signature' ? `signature:${item.signature_scheme}` : item.auth_mode),
            },
            { header: 'URL', value: (item) => item.url },
          ],
          'No webhooks. Create one with `hangar webhooks create --name <name>`.',
        ),
      );
    });
  webhooks
    .command('create')
    .description('create a webhook; its secret is shown once')
    .requiredOption('--name <name>', 'name shown in the automation editor')
    .option('--auth-mode <mode>', 'token (default), url_token or signature')
    .option(
      '--scheme <scheme>',
      `provider signature scheme (implies --auth-mode signature): ${SIGNATURE_SCHEME_NAMES.join(', ')}`,
    )
    .option(
      '--secret <secret>',
      "the provider's signing secret (signature mode; generated for standard_webhooks and github when left out)",
    )
    .option('--secret-name <name>', 'keep the credential in this team secret instead')
    .option('--delivery-id-header <header>', 'header the sender stamps its own event ID into')
    .option('--factory <uid>', "factory (default: the team's default factory)")
    .option('--disabled', 'create it disabled')
    .addHelpText(
      'after',
      `
Examples:
  $ hangar webhooks create --name issues --scheme github --secret "$GITHUB_WEBHOOK_SECRET"
  $ hangar webhooks create --name alerts                      # token mode: the token is printed once
`,
    )
    .action(async (options: WebhookOptions) =>
      printIssued(await callApi<WebhookItem>(clientOptionsFromEnv(), 'POST', '/factory/webhooks', body(options))),
    );
  webhooks
    .command('update')
    .description('change a webhook; changing how senders authenticate issues a new secret, shown once')
    .argument('<uid>')
    .option('--name <name>')
    .option('--auth-mode <mode>', 'token, url_token or signature')
    .option('--scheme <scheme>', 'provider signature scheme (implies --auth-mode signature)')
    .option('--secret <secret>', "the provider's new signing secret")
    .option('--secret-name <name>', 'keep the credential in this team secret')
    .option('--delivery-id-header <header>')
    .action(async (uid: string, options: WebhookOptions) =>
      printIssued(await callApi<WebhookItem>(clientOptionsFromEnv(), 'PUT', path(uid), body(options))),
    );
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    webhooks
      .command(verb)
      .description(
        enabled ? 'accept deliveries again' : 'answer senders 404 until enabled again (automations and the log stay)',
      )
      .argument('<uid>')
      .action((uid: string) => callAndPrint('PUT', path(uid), { enabled }));
  }
  webhooks
    .command('rotate')
    .description('issue a new secret; the old one stops working at once')
    .argument('<uid>')
    .option('--secret <secret>', "the provider's new signing secret (for providers that issue their own)")
    .action(async (uid: string, options: { secret?: string }) =>
      printIssued(
        await callApi<WebhookItem>(
          clientOptionsFromEnv(),
          'POST',
          path(uid, '/rotate'),
          options.secret ? { secret: options.secret } : {},
        ),
      ),
    );
  webhooks
    .command('get')
    .description('show one webhook')
    .argument('<uid>')
    .action((uid: string) => callAndPrint('GET', path(uid)));
  webhooks
    .command('delete')
    .description('delete a webhook; senders get 404, automations that select it stop firing')
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid));
      say(`Deleted webhook ${uid}.`);
    });
  webhooks
    .command('deliveries')
    .description("a webhook's delivery log, newest first")
    .argument('<uid>')
    .option('--limit <n>', 'how many', '50')
    .addHelpText('after', '\nExamples:\n  $ hangar webhooks deliveries <uid> --limit 10\n')
    .action(async (uid: string, options: { limit: string }) => {
      const result = await callApi<{ deliveries: DeliveryItem[] }>(
        clientOptionsFromEnv(),
        'GET',
        `${path(uid, '/deliveries')}?limit=${encodeURIComponent(options.limit)}`,
      );
      show(result, ({ deliveries }) =>
        table(
          deliveries,
          [
            { header: 'RECEIVED', value: (item) => item.received_at },
            { header: 'STATUS', value: (item) => item.status },
            { header: 'SIZE', value: (item) => `${item.size_bytes} B` },
            { header: 'DELIVERY ID', value: (item) => item.delivery_id },
          ],
          'No deliveries yet.',
        ),
      );
    });
  webhooks
    .command('delivery')
    .description('one delivery with its payload and the runs it started')
    .argument('<uid>')
    .argument('<delivery_id>')
    .action((uid: string, deliveryId: string) =>
      callAndPrint('GET', path(uid, `/deliveries/${encodeURIComponent(deliveryId)}`)),
    );
}
