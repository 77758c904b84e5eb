#!/usr/bin/env bash
# Project set-up, run by `npm start` and `npm test` (and by hand: `npm run setup`).
# 1. Node dependencies: `npm ci` when node_modules is missing or older than the lockfile.
# 2. System packages the integration tests and the kernel probe need, installed with apt when
#    running as root on Debian; elsewhere the exact command is printed and the tests that need
#    them report themselves as skipped (CI=true turns a skip into a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1
say() { [ "$quiet" = 1 ] || echo "setup: $*" >&2; }

# --- node dependencies -----------------------------------------------------------------------
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "setup: installing node dependencies" >&2
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund >&2; else npm install --no-audit --no-fund >&2; fi
fi

# --- system packages -------------------------------------------------------------------------
# One line per package: "<debian package> <command or file that proves it is installed>".
APT_PACKAGES=(
  "prometheus /usr/bin/prometheus"
  "postgresql /usr/lib/postgresql/15/bin/initdb"
  "openssl /usr/bin/openssl"
  "curl /usr/bin/curl"
  "clang /usr/bin/clang"
  "llvm /usr/bin/llvm-strip"
  "libbpf-dev /usr/include/bpf/libbpf.h"
  "bpftool /usr/sbin/bpftool"
  "libelf-dev /usr/include/libelf.h"
  "zlib1g-dev /usr/include/zlib.h"
  "pkg-config /usr/bin/pkg-config"
  "g++ /usr/bin/g++"
  "make /usr/bin/make"
)
missing=()
for entry in "${APT_PACKAGES[@]}"; do
  pkg=${entry%% *}; probe=${entry#* }
  if [ "${probe:0:1}" = "/" ]; then [ -e "$probe" ] || missing+=("$pkg")
  else command -v "$probe" >/dev/null 2>&1 || missing+=("$pkg"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing system packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them with: sudo apt-get install -y ${missing[*]}" >&2
    echo "setup: tests that need them will be reported as skipped" >&2
  fi
fi
bash scripts/build-probe.sh $([ "$quiet" = 1 ] && echo --quiet) || echo "setup: kernel probe build failed; the syscall source will report it" >&2
say "ready"
