// The Node versions package.json's engines promise must be ones every runtime dependency accepts: otherwise
// `npm ci` on a supported Node warns EBADENGINE, and the dependency may not work there (cookie 2 cannot even be
// loaded on Node 20). Development packages are installed by `npm ci` too, so they must accept the versions CI
// installs with, the oldest supported (Node 20) and the newest LTS (Node 24): two that wanted Node 22 made a
// newcomer's `npm ci` on Node 20 warn although the README says it does not (issue 48). A package only a benchmark
// needs is installed by that benchmark (bench/dispatch: graphile-worker).
/** What a development package must accept: the lowest version the engines allow, and Node 24. */
const DEVELOPMENT_NODES = ['24.0.0'];

import fs from 'node:fs';
import semver from 'semver';

const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const supported = manifest.engines.node;
const refused = [];
const developmentNodes = [semver.minVersion(supported).version, ...DEVELOPMENT_NODES];
for (const [where, entry] of Object.entries(lock.packages)) {
  if (!where || entry.optional || !entry.engines?.node) continue;
  const range = typeof entry.engines.node === 'string' ? entry.engines.node : null;
  if (!range) continue;
  const name = `${where.replace(/^.*node_modules\//, '')}@${entry.version}`;
  if (!entry.dev && !semver.subset(supported, range, { includePrerelease: false }))
    refused.push(`${name} wants node ${range}`);
  const missed = developmentNodes.filter((version) => !semver.satisfies(version, range));
  if (entry.dev && missed.length > 0)
    refused.push(`${name} (development) wants node ${range}: \`npm ci\` on ${missed.join(', ')} warns EBADENGINE`);
}
if (refused.length > 0) {
  console.error(`engines: package.json supports node ${supported}, but these dependencies do not:`);
  for (const line of refused) console.error(`  ${line}`);
  process.exit(1);
}
console.log(
  `engines: every runtime dependency accepts node ${supported}, every development one ${developmentNodes.join(' and ')}`,
);
