#!/usr/bin/env bash
# Builds the engine image from the Containerfile (deploy/README.md).
#
#   scripts/build-image.sh [--tag REF] [--base IMAGE] [--builder IMAGE] [--base-from-host]
#                          [--tool podman|docker] [--podman-root DIR] [--push REF] [--oci-archive FILE]
#
# The build context is staged in a temporary directory: the checkout's files (tracked and
# untracked, not ignored), node_modules as installed here and the probe built here
# (scripts/build-probe.sh), so the build stage downloads nothing. --base-from-host makes both
# bases from this machine instead of pulling them (no registry needed): the runtime base is this
# machine's node binary with the libraries it links, busybox-static and CA certificates; the
# builder adds npm and the probe addon's libraries. Both are cached as rootfs tars outside the
# repository ($RAE_IMAGE_CACHE, default /var/tmp/runtime-audit-engine-image) and imported.
# Podman runs with runc, cgroupfs and ulimits at or below this host's hard limits (podman's own
# defaults fail where the capability bounding set lacks CAP_SYS_RESOURCE; crun refuses hybrid
# cgroups). --podman-root keeps images in a private store (tests). Prints the image reference on
# stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=$(node -p 'require("./package.json").version')
tag="localhost/runtime-audit-engine:$version"
base="" builder="" from_host=0 tool="" podman_root="" push="" archive=""
usage() { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=${2:?}; shift ;;
    --base) base=${2:?}; shift ;;
    --builder) builder=${2:?}; shift ;;
    --base-from-host) from_host=1 ;;
    --tool) tool=${2:?}; shift ;;
    --podman-root) podman_root=${2:?}; shift ;;
    --push) push=${2:?}; shift ;;
    --oci-archive) archive=${2:?}; shift ;;
    -h|--help) usage ;;
    *) echo "build-image: unknown argument $1" >&2; usage ;;
  esac
  shift
done
[ -n "$tool" ] || { command -v podman >/dev/null 2>&1 && tool=podman || tool=docker; }
case "$tool" in podman|docker) ;; *) echo "build-image: --tool takes podman or docker" >&2; exit 2 ;; esac
say() { echo "build-image: $*" >&2; }

ctl=("$tool")
build_opts=()
if [ "$tool" = podman ]; then
  ctl+=(--runtime runc --cgroup-manager cgroupfs --events-backend file)
  [ -n "$podman_root" ] && ctl+=(--root "$podman_root/root" --runroot "$podman_root/run")
  build_opts+=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=32768:32768)
fi

rel=probes/build/Release
if [ ! -f "$rel/rae_probe.node" ] || [ ! -f "$rel/rae_watchdog.node" ]; then
  bash scripts/build-probe.sh
  [ -f "$rel/rae_probe.node" ] || { say "the probe is not built here (scripts/build-probe.sh said why)"; exit 1; }
fi

work=$(mktemp -d /tmp/rae-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Copies each library an ELF file links (ldd) into the rootfs, under the same path.
copy_libs() {
  local dest=$1; shift
  ldd "$@" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}' | sort -u | while read -r lib; do
    mkdir -p "$dest$(dirname "$lib")"
    cp -L "$lib" "$dest$lib"
  done
}

# --base-from-host: a runtime base and a builder base from this machine's files, cached.
host_bases() {
  local cache=${RAE_IMAGE_CACHE:-/var/tmp/runtime-audit-engine-image}
  local key
  # ldd's load addresses change with every run (ASLR): only the resolved paths make the key.
  key=$( { node -v; sha256sum "$root/scripts/build-image.sh" /usr/bin/node /bin/busybox "$rel/rae_probe.node"; ldd /usr/bin/node "$rel/rae_probe.node" | sed 's/ (0x[0-9a-f]*)//'; } | sha256sum | cut -c1-12)
  local base_tar=$cache/base-$key.tar builder_tar=$cache/builder-$key.tar
  if [ ! -f "$base_tar" ] || [ ! -f "$builder_tar" ]; then
    say "making the bases from this machine into $cache"
    mkdir -p "$cache"
    # bases of other keys are other checkouts' (each builds its own probe addon, so the keys
    # differ): deleting them would fail a build beside this one; only bases unused for a week go
    find "$cache" -maxdepth 1 \( -name 'base-*.tar' -o -name 'builder-*.tar' \) -mtime +7 -delete
    local r=$work/rootfs
    mkdir -p "$r"/{bin,etc,root,tmp,var/tmp,usr/bin,usr/lib,proc,sys,dev,run}
    chmod 1777 "$r/tmp" "$r/var/tmp"
    cp /bin/busybox "$r/bin/busybox"
    for a in $(/bin/busybox --list); do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
    ln -s /bin/env "$r/usr/bin/env"
    cp -L /usr/bin/node "$r/usr/bin/node"
    copy_libs "$r" /usr/bin/node
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
    printf 'root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n' >"$r/etc/shadow" && chmod 640 "$r/etc/shadow"
    printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
    if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
      mkdir -p "$r/etc/ssl/certs" && cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
    fi
    tar -C "$r" -cf "$base_tar.tmp.$$" . && mv "$base_tar.tmp.$$" "$base_tar"
    # The builder: npm and the libraries the probe addon links (the build stage copies them).
    mkdir -p "$r/usr/lib/node_modules"
    cp -a "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$r/usr/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/bin/npm"
    copy_libs "$r" "$rel/rae_probe.node"
    tar -C "$r" -cf "$builder_tar.tmp.$$" . && mv "$builder_tar.tmp.$$" "$builder_tar"
    rm -rf "$r"
  fi
  touch "$base_tar" "$builder_tar" # in use: the week's pruning above counts from here
  local env='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  base=localhost/rae-host-base:$key
  builder=localhost/rae-host-builder:$key
  "${ctl[@]}" image exists "$base" 2>/dev/null || "${ctl[@]}" import --change "$env" --change 'CMD ["/bin/sh"]' "$base_tar" "$base" >/dev/null
  "${ctl[@]}" image exists "$builder" 2>/dev/null || "${ctl[@]}" import --change "$env" --change 'CMD ["/bin/sh"]' "$builder_tar" "$builder" >/dev/null
  build_opts+=(--pull=never --network=none)
}
if [ "$from_host" = 1 ]; then
  [ "$tool" = podman ] || { say "--base-from-host needs podman (docker import has no image exists)"; exit 2; }
  host_bases
fi

# The context: the checkout, node_modules as installed here (hard links where possible), the probe.
ctx=$work/context
mkdir -p "$ctx/$rel"
git ls-files -co --exclude-standard -z | grep -zv -e '^node_modules$' -e '^node_modules/' -e '^probes/build/' | tar --null -T - -cf - | tar -xf - -C "$ctx"
modules=$(readlink -f node_modules)
cp -al "$modules" "$ctx/node_modules" 2>/dev/null || cp -a "$modules" "$ctx/node_modules"
cp "$rel/rae_probe.node" "$rel/rae_watchdog.node" "$ctx/$rel/"
# the console's pages, built here (Vite's bundler finds no native binding in the image's builder);
# scripts/build.mjs in the image reuses them, their mtimes kept newer than the sources'
node scripts/build-console.mjs >&2 || { say "the console's pages did not build (scripts/build-console.mjs)"; exit 1; }
mkdir -p "$ctx/build"
cp -a build/console "$ctx/build/console"

args=()
[ -n "$base" ] && args+=(--build-arg "BASE=$base")
[ -n "$builder" ] && args+=(--build-arg "BUILDER=$builder")
say "building $tag with $tool${base:+ (base $base)}"
t0=$(date +%s)
"${ctl[@]}" build "${build_opts[@]}" "${args[@]}" -f "$root/Containerfile" -t "$tag" "$ctx" >&2
say "built $tag in $(( $(date +%s) - t0 )) s"

if [ -n "$archive" ]; then
  if [ "$tool" = podman ]; then "${ctl[@]}" save --format oci-archive -o "$archive" "$tag" >&2
  else "${ctl[@]}" save -o "$archive" "$tag" >&2; fi
  say "saved $archive"
fi
if [ -n "$push" ]; then
  "${ctl[@]}" tag "$tag" "$push"
  "${ctl[@]}" push "$push" >&2
  say "pushed $push"
fi
echo "$tag"
