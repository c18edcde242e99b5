// The Node versions package.json's engines promise must be ones every runtime dependency accepts: otherwise
// `npm ci` on a supported Node warns EBADENGINE, and the dependency may not work there (cookie 2 cannot even be
// loaded on Node 20). Development-only packages are not checked: they run in CI, on the Node it tests with.
import fs from 'node:fs';
import semver from 'semver';

const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const supported = manifest.engines.node;
const refused = [];
for (const [where, entry] of Object.entries(lock.packages)) {
  if (!where || entry.dev || entry.optional || !entry.engines?.node) continue;
  const range = typeof entry.engines.node === 'string' ? entry.engines.node : null;
  if (range && !semver.subset(supported, range, { includePrerelease: false }))
    refused.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version} wants node ${range}`);
}
if (refused.length > 0) {
  console.error(`engines: package.json supports node ${supported}, but these runtime dependencies do not:`);
  for (const line of refused) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`engines: every runtime dependency accepts node ${supported}`);
