/**
 * Named sets of hosts an environment's allow list can take in one word. Each covers what its tool fetches from
 * by default (the index, the file hosts the index points to); a mirror of the operator's needs its own entry.
 * docs/environments.md lists the same hosts: change both together.
 */
export const NETWORK_PRESETS = {
  npm: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  pypi: ['pypi.org', 'files.pythonhosted.org'],
  crates: ['crates.io', 'index.crates.io', 'static.crates.io'],
  go: ['proxy.golang.org', 'sum.golang.org', 'storage.googleapis.com'],
  maven: ['repo.maven.apache.org', 'repo1.maven.org'],
  debian: ['deb.debian.org', 'security.debian.org'],
  ubuntu: ['archive.ubuntu.com', 'security.ubuntu.com', 'ports.ubuntu.com'],
  github: [
    'github.com',
    'api.github.com',
    'codeload.github.com',
    'objects.githubusercontent.com',
    'raw.githubusercontent.com',
    '*.githubusercontent.com',
  ],
} as const satisfies Record<string, readonly string[]>;

export type NetworkPreset = keyof typeof NETWORK_PRESETS;

export const PRESET_NAMES = Object.keys(NETWORK_PRESETS) as NetworkPreset[];
