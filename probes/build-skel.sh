#!/usr/bin/env bash
# Compiles the BPF probe and writes its libbpf skeleton header: build-skel.sh <output dir>.
# Called by binding.gyp's probe_skel action with the current directory at probes/.
set -euo pipefail
out=$1
mkdir -p "$out"
case "$(uname -m)" in
  x86_64) arch=x86 ;;
  *) echo "build-skel.sh: the probe decodes x86-64 syscalls only (this is $(uname -m))" >&2; exit 1 ;;
esac
PATH=$PATH:/usr/sbin:/sbin
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
clang -O2 -g -target bpf "-D__TARGET_ARCH_$arch" -I"/usr/include/$multiarch" -Isrc \
  -Wall -Wno-unused-function -c src/probe.bpf.c -o "$out/probe.bpf.o"
llvm-strip -g "$out/probe.bpf.o"
bpftool gen skeleton "$out/probe.bpf.o" name probe > "$out/probe.skel.h.tmp"
mv "$out/probe.skel.h.tmp" "$out/probe.skel.h"
