#!/bin/sh
# The Containerfile's build stage: assembles what the image's final stage copies into OUT
# (OUT/opt/runtime-audit-engine, OUT/var/lib/runtime-audit-engine). Plain POSIX sh: it runs in
# any builder with Node 20 and npm (an official node image, or the base scripts/build-image.sh
# makes from this machine with busybox). Nothing is downloaded when the context already has
# node_modules and the built probe (scripts/build-image.sh puts both there); otherwise it
# installs the dependencies (npm ci) and the toolchain (apt) and builds the probe first.
set -eu
out=${1:?usage: image-stage.sh OUT}
app=$out/opt/runtime-audit-engine
rel=probes/build/Release

if [ ! -f node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=warn
fi
if [ ! -f "$rel/rae_probe.node" ] || [ ! -f "$rel/rae_watchdog.node" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config g++ make python3
  bash scripts/build-probe.sh
  [ -f "$rel/rae_probe.node" ] || { echo "image-stage: the probe did not build" >&2; exit 1; }
fi
# The JavaScript build (scripts/build.mjs, dist/) while typescript is still here: the image runs
# it (RAE_BUILD in the Containerfile), not the sources through tsx.
node scripts/build.mjs
# Production dependencies only: node-gyp, typescript, uvu, ajv, ... leave here.
npm prune --omit=dev --offline --no-audit --no-fund --ignore-scripts --loglevel=error

mkdir -p "$app/$rel" "$app/lib" "$out/var/lib/runtime-audit-engine"
cp -R bin host dist assembly asconfig.json rules node_modules package.json package-lock.json tsconfig.json "$app/"
cp "$rel/rae_probe.node" "$rel/rae_watchdog.node" "$app/$rel/"
# The libraries the probe addon links beyond glibc and libstdc++ (`ldd rae_probe.node`), so the
# final stage needs only Node: an official node image has none of them. The image test loads the
# addon in the final image, so a library missing here fails it.
for lib in libbpf.so.1 libelf.so.1 libz.so.1; do
  found=
  for dir in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64 /lib64 /usr/lib /lib; do
    if [ -e "$dir/$lib" ]; then cp -L "$dir/$lib" "$app/lib/$lib"; found=1; break; fi
  done
  [ -n "$found" ] || { echo "image-stage: $lib is not in the build stage" >&2; exit 1; }
done
echo "image-stage: $(du -sh "$app" | cut -f1) in $app" >&2
