#!/usr/bin/env bash
# Builds the kernel probe and its Node addon into probes/build/ (gitignored): clang compiles
# probes/src/probe.bpf.c, bpftool turns it into a skeleton header, node-gyp compiles the addon
# against the local Node headers (--nodedir=/usr: nothing is downloaded).
# Called by scripts/setup.sh (so by `npm test` and `npm start`). It rebuilds only when a source
# changed: a hash of the probe's sources, the Node version and the toolchain is kept in
# probes/build/.stamp. Exits 0 with a message when the probe cannot be built here (not Linux
# x86-64, tools missing); the syscall source then reports itself unavailable (probeSupport()).
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1
say() { [ "$quiet" = 1 ] || echo "build-probe: $*" >&2; }
out=probes/build
addon=$out/Release/rae_probe.node

if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
  say "skipped: the probe is built for Linux x86-64 only"; exit 0
fi
PATH=$PATH:/usr/sbin:/sbin
missing=()
for tool in clang llvm-strip bpftool g++ make; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
[ -f /usr/include/bpf/libbpf.h ] || missing+=("libbpf-dev")
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-probe: not built, missing: ${missing[*]} (scripts/setup.sh installs them as root)" >&2; exit 0
fi

stamp=$( { cat probes/binding.gyp probes/build-skel.sh probes/src/* probes/addon/* probes/watchdog/*; node -v; clang --version | head -1; } | sha256sum | cut -d' ' -f1)
if [ -f "$addon" ] && [ -f "$out/Release/rae_watchdog.node" ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
  say "up to date"; exit 0
fi

echo "build-probe: building probes/build (clang, bpftool, node-gyp)" >&2
log=$(mktemp)
# Incremental when configured already (make tracks every source), so the .node is replaced in place
# rather than deleted first: a concurrent reader never finds it missing.
step=rebuild
[ -f "$out/Makefile" ] && [ -f "$out/config.gypi" ] && [ probes/binding.gyp -ot "$out/Makefile" ] && step="configure build"
if ! for s in $step; do node node_modules/node-gyp/bin/node-gyp.js "$s" --nodedir=/usr --directory=probes || exit 1; done >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"
  echo "build-probe: build failed (output above)" >&2; exit 1
fi
rm -f "$log"
echo "$stamp" > "$out/.stamp"
say "built $addon"
