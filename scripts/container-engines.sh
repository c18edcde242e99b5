#!/usr/bin/env bash
# Prepares the two container engines the container sandbox is tested against, on this machine, as root:
#   - Podman's Docker-compatible service on unix:///run/hangar-test/podman.sock
#   - Docker Engine (dockerd, started by hand: there is no systemd) on unix:///var/run/docker.sock
# and the local base image both engines hold, `localhost/hangar-test/debian:bookworm` (a minimal Debian built with
# debootstrap, because no image registry is reachable here). Everything is kept between runs: the packages, the
# engines' image stores and the debootstrap tarball, so a second run takes seconds.
#
# Prints the engines that are ready as `podman unix:///...` / `docker unix:///...` lines on stdout; everything else
# goes to stderr. An engine that cannot start is left out (the caller decides whether that is fatal).
#
#   HANGAR_IMAGE_CACHE   where the debootstrap tarball is kept (default /var/cache/hangar-images)
set -euo pipefail

cache="${HANGAR_IMAGE_CACHE:-/var/cache/hangar-images}"
base_image=localhost/hangar-test/debian:bookworm
podman_socket=/run/hangar-test/podman.sock
docker_socket=/var/run/docker.sock
log_dir=/var/log/hangar-test
mkdir -p "$cache" "$(dirname "$podman_socket")" "$log_dir"

apt_install() {
  local missing=()
  for package in "$@"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2; }
}

# docker-registry: Docker's own registry (distribution), the private registry of test/support/image-registry.ts.
apt_install podman runc debootstrap fuse-overlayfs uidmap slirp4netns containernetworking-plugins catatonit \
  docker.io containerd docker-registry

# Podman 4.3 on this kind of VM: crun refuses the hybrid cgroup layout, and the default ulimits exceed the VM's hard
# nofile limit (FIELD-NOTES). Written once; an operator's own file is left alone if it already says both.
conf=/etc/containers/containers.conf
if ! grep -q '^runtime = "runc"' "$conf" 2>/dev/null || ! grep -q '^default_ulimits' "$conf" 2>/dev/null; then
  hard_nofile=$(ulimit -Hn)
  [[ "$hard_nofile" == unlimited ]] && hard_nofile=1048576
  cat >"$conf" <<EOF
# Written by Hangar's scripts/container-engines.sh for this machine (see FIELD-NOTES: runc, ulimits).
[containers]
default_ulimits = ["nofile=${hard_nofile}:${hard_nofile}","nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
fi

socket_answers() { curl -sf --unix-socket "$1" http://engine/_ping >/dev/null 2>&1; }
wait_for_socket() {
  for _ in $(seq 1 100); do
    socket_answers "$1" && return 0
    sleep 0.2
  done
  return 1
}

# A daemon in a session of its own, from /, its output in a log: none of this script's file descriptors stay open in
# it, because the caller reads this script's stdout to its end (a subshell around it would hold that pipe open for
# as long as the daemon lives, and the caller would wait forever).
start_daemon() {
  local log=$1
  shift
  env -C / setsid "$@" >"$log_dir/$log" 2>&1 </dev/null &
}

# The engines are started from / (start_daemon): they outlive this run, and a working directory in the checkout
# would be deleted with it. Podman's service then still answers, but conmon fails every container it starts
# ("Failed to get working directory"). One left so by an earlier run is stopped here, to be started again.
working_directory_deleted() { [[ "$(readlink "/proc/$1/cwd" 2>/dev/null)" == *" (deleted)" ]]; }
for pid in $(pgrep -f "^podman system service --time=0 unix://$podman_socket" || true); do
  if working_directory_deleted "$pid"; then
    echo "restarting Podman's service: its working directory was deleted" >&2
    kill "$pid" && tail --pid="$pid" -f /dev/null
    rm -f "$podman_socket"
  fi
done

# Podman's service. --time=0: it never exits for being idle.
if ! socket_answers "$podman_socket"; then
  rm -f "$podman_socket"
  start_daemon podman.log podman system service --time=0 "unix://$podman_socket"
  wait_for_socket "$podman_socket" || echo "podman's service did not answer; see $log_dir/podman.log" >&2
fi

# Docker Engine: containerd, then dockerd.
if ! socket_answers "$docker_socket"; then
  if ! pgrep -x containerd >/dev/null; then
    start_daemon containerd.log containerd
  fi
  if ! pgrep -x dockerd >/dev/null; then
    start_daemon dockerd.log dockerd --host "unix://$docker_socket"
  fi
  wait_for_socket "$docker_socket" || echo "dockerd did not answer; see $log_dir/dockerd.log" >&2
fi

# The base image: debootstrap once into a tarball kept in the cache, then imported into each engine that lacks it.
tarball="$cache/debian-bookworm-minbase.tar"
if [[ ! -s "$tarball" ]]; then
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  [[ -z "$mirror" ]] && mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  mirror=${mirror:-http://deb.debian.org/debian}
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  echo "debootstrap bookworm from $mirror (about 30 s)" >&2
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$log_dir/debootstrap.log" 2>&1 ||
    { echo "debootstrap failed; see $log_dir/debootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
  tar -C "$rootfs" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  rm -rf "$rootfs"
fi

if socket_answers "$podman_socket"; then
  podman image exists "$base_image" || podman import "$tarball" "$base_image" >&2
  echo "podman unix://$podman_socket"
fi
if socket_answers "$docker_socket"; then
  if ! docker -H "unix://$docker_socket" image inspect "$base_image" >/dev/null 2>&1; then
    docker -H "unix://$docker_socket" import "$tarball" "$base_image" >&2
  fi
  echo "docker unix://$docker_socket"
fi
