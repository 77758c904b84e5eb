#!/bin/sh
# runc for a private dockerd on a host whose capability bounding set lacks CAP_SYS_RESOURCE
# (reference containers.md section 5): `docker run --privileged` asks for every capability the
# kernel knows and runc fails with "unable to apply caps: operation not permitted". On create/run
# this filters <bundle>/config.json, on exec the --process file, keeping only capabilities in the
# bounding set (runc-boundcaps.mjs), then runs the real runc. docker.ts fills in @NODE@/@FILTER@.
file=""; prev=""; cmd=""
for a in "$@"; do
  case "$prev" in --bundle|-b) file="$a/config.json";; --process|-p) file="$a";; esac
  case "$a" in --bundle=*) file="${a#--bundle=}/config.json";; --process=*) file="${a#--process=}";; esac
  case "$a" in create|run|exec) [ -z "$cmd" ] && cmd="$a";; esac
  prev="$a"
done
if [ -n "$cmd" ] && [ -n "$file" ] && [ -f "$file" ]; then
  "@NODE@" "@FILTER@" "$file" || exit 1
fi
exec /usr/sbin/runc "$@"
