#!/usr/bin/env bash
# Installs the coding-agent CLIs Hangar runs as harnesses (claude, codex, gemini) at pinned versions into a cache
# directory, each in its own npm prefix, and links their executables into one bin/ directory. A CLI already there
# at its pinned version is left alone, so a second run takes well under a second.
#
#   HANGAR_AGENT_CLIS_DIR   where to install (default: /opt/hangar/agent-clis as root, else ~/.cache/hangar/agent-clis);
#                           the bins end up in $DIR/bin
set -euo pipefail

# As root, outside root's home: a root server runs its harnesses as an unprivileged run user, who must be able to
# execute them (root's home is closed to other users).
if [[ "$(id -u)" == 0 ]]; then default_dir=/opt/hangar/agent-clis; else default_dir="$HOME/.cache/hangar/agent-clis"; fi
dir="${HANGAR_AGENT_CLIS_DIR:-$default_dir}"
mkdir -p "$dir/bin"

# name, npm package, version, executable, extra npm flags
install_cli() {
  local name=$1 package=$2 version=$3 binary=$4
  shift 4
  local prefix="$dir/$name"
  local manifest="$prefix/lib/node_modules/$package/package.json"
  local installed=""
  [[ -f "$manifest" ]] && installed=$(node -p "require(process.argv[1]).version" "$manifest")
  if [[ "$installed" != "$version" ]]; then
    echo "installing $package@$version into $prefix" >&2
    rm -rf "$prefix"
    # A broken install (a platform package or a postinstall step that did not run) shows here, not in a harness
    # run, and is removed so that the next run tries again.
    if ! { npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" "$package@$version" >&2 &&
      "$prefix/bin/$binary" --version >/dev/null; }; then
      rm -rf "$prefix"
      echo "could not install $package@$version" >&2
      exit 1
    fi
  fi
  ln -sfn "$prefix/bin/$binary" "$dir/bin/$binary"
}

# Claude Code's postinstall copies the native binary of this platform into place.
install_cli claude @anthropic-ai/claude-code 2.1.197 claude --allow-scripts=@anthropic-ai/claude-code
# Codex ships its native binary as an optional dependency; no install script.
install_cli codex @openai/codex 0.169.0 codex
# Gemini CLI's install scripts only build optional native modules (node-pty, keytar) that a headless run does
# not need; skipping them avoids a node-gyp build.
install_cli gemini @google/gemini-cli 0.61.0 gemini --ignore-scripts

echo "agent CLIs: $dir/bin ($(ls "$dir/bin" | tr '\n' ' '))"
