#!/usr/bin/env bash
# Project set-up, run by `npm start` (`--for run`) and `npm test` (`--for test`, the default;
# by hand: `npm run setup`).
# 1. Node dependencies: `npm ci` when node_modules is missing or older than the lockfile.
# 2. System packages, installed with apt when running as root on Debian: for `run`, only what the
#    engine itself needs on a node (the kernel probe's toolchain); for `test`, also the servers the
#    integration tests start (PostgreSQL, Prometheus) and their tools. Elsewhere the exact command
#    is printed and the tests that need them report themselves as skipped (CI=true turns a skip
#    into a failure).
# 3. For `test`, the JavaScript build in dist/ when it is missing or stale (below).
# 4. The web console's pages (Vite) in build/console/ when missing or stale (both purposes).
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=0
purpose=test
while [ $# -gt 0 ]; do
  case "$1" in
    --quiet) quiet=1 ;;
    --for) purpose=${2:-}; shift ;;
    -h|--help) echo "usage: scripts/setup.sh [--quiet] [--for run|test]"; exit 0 ;;
    *) echo "setup: unknown argument $1 (usage: scripts/setup.sh [--quiet] [--for run|test])" >&2; exit 2 ;;
  esac
  shift
done
case "$purpose" in run|test) ;; *) echo "setup: --for takes run or test, not '$purpose'" >&2; exit 2 ;; esac
say() { [ "$quiet" = 1 ] || echo "setup: $*" >&2; }

# --- node dependencies -----------------------------------------------------------------------
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "setup: installing node dependencies" >&2
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=warn >&2; else npm install --no-audit --no-fund --loglevel=warn >&2; fi
fi

# --- system packages -------------------------------------------------------------------------
# One line per package: "<debian package> <command or file that proves it is installed>".
# What `rae run` needs: the kernel probe's toolchain (scripts/build-probe.sh).
APT_PACKAGES=(
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
# What only the tests need: the real servers they start, and the tools they call.
if [ "$purpose" = test ]; then
  APT_PACKAGES+=(
    "prometheus /usr/bin/prometheus"
    "postgresql /usr/lib/postgresql/15/bin/initdb"
    "openssl /usr/bin/openssl"
    "curl /usr/bin/curl"
    "prometheus-alertmanager /usr/bin/prometheus-alertmanager"
    "nats-server /usr/sbin/nats-server"
    "redis-server /usr/bin/redis-server"
    "mosquitto /usr/sbin/mosquitto"
    "rsyslog /usr/sbin/rsyslogd"
    "exim4-daemon-light /usr/sbin/exim4"
    # container runtimes the container-metadata tests start privately (containerd pulls runc);
    # busybox-static is the offline images' userland (support/containers/)
    "containerd /usr/bin/containerd"
    "runc /usr/sbin/runc"
    "docker.io /usr/sbin/dockerd"
    "podman /usr/bin/podman"
    "busybox-static /bin/busybox"
    # the event generator's "Java Process Class File Download" action runs a java program
    # (test/generator/more-actions.test.ts requires every action that can run to fire its rule)
    "openjdk-17-jre-headless java"
    # kubectl's built-in kustomize renders deploy/ (test/deploy/manifests.test.ts); machines of this
    # kind have one from the cloud SDK, Debian's kubernetes-client only where none is on PATH
    "kubernetes-client kubectl"
    # event-generator suites (host/testing/suite/): the test's processes run leaf.pl (perl with
    # JSON::PP, Debian's perl) in a program compiled at run time with cc (g++ above brings gcc)
    # against perl's own libperl and headers; a clientServer address the node lacks is added to lo with ip
    "perl /usr/bin/cpan"
    "iproute2 ip"
    # the console's browser tests (test/console/) drive Debian's chromium through playwright-core
    # (headless, no browser download)
    "chromium /usr/bin/chromium"
  )
fi
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
    # The servers' packages would start system-wide daemons; tests start private instances, so
    # nothing is started at install (Debian's policy-rc.d convention), unless the machine says so.
    own_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; own_policy=1; fi
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || { [ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d; exit 1; }
    [ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them with: sudo apt-get install -y ${missing[*]}" >&2
    echo "setup: tests that need them will be reported as skipped" >&2
  fi
fi
bash scripts/build-probe.sh $([ "$quiet" = 1 ] && echo --quiet) || echo "setup: kernel probe build failed; the syscall source will report it" >&2

# --- the audit webhook's EventList walk in WebAssembly ------------------------------------------
# The sources (tsx) load build/json-index.wasm (host/sources/audit/list-walk.ts; dist/ has its
# own, made by scripts/build.mjs): built when missing or older than its source (both purposes).
if [ ! -f build/json-index.wasm ] || [ assembly/webhook/json-index.ts -nt build/json-index.wasm ] || [ scripts/build-json-index.mjs -nt build/json-index.wasm ]; then
  say "building build/json-index.wasm (the webhook's EventList walk)"
  node scripts/build-json-index.mjs >&2 || echo "setup: build/json-index.wasm did not build; the webhook walks EventLists in JavaScript (slower)" >&2
fi

# --- the JavaScript build (tests) ------------------------------------------------------------
# Every `rae` process the tests start runs dist/ when it is up to date (bin/rae.js), about half
# the CPU of running the sources through tsx (1.1 s instead of 2.6 s for `rae run --version`);
# a source changed after the build makes bin/rae.js run the sources again, so dist/ is only a
# cache. Built when missing or older than a source (the sources bin/rae.js compares).
if [ "$purpose" = test ] && [ -z "${RAE_TSX:-}" ]; then
  if [ ! -f dist/build-info.json ] || [ -n "$(find host assembly rules asconfig.json package.json tsconfig.json tsconfig.build.json -newer dist/build-info.json -print -quit)" ]; then
    say "building dist/ (npm run build) for the tests' rae processes"
    node scripts/build.mjs >&2 || echo "setup: npm run build failed; the tests' rae processes run the sources through tsx" >&2
  fi
fi

# --- the web console's pages ------------------------------------------------------------------
# `rae run` serves them from build/console/ (scripts/build-console.mjs; the dist/ build above makes
# them too): built when missing or older than a source of host/console/web/ or the lockfile.
if [ ! -f build/console/build-info.json ] || [ -n "$(find host/console/web host/console/shapes.ts package-lock.json -newer build/console/build-info.json -print -quit)" ]; then
  say "building the console's pages (build/console/)"
  node scripts/build-console.mjs >&2 || echo "setup: the console's pages did not build; the console answers 503 until they do (npm run build)" >&2
fi
say "ready"
