# node-gyp build of the capture addon (run by scripts/build-probe.sh, never downloads headers:
# it is always given --nodedir). The `probe_skel` action compiles src/probe.bpf.c with clang and
# turns the object into a libbpf skeleton header (build-skel.sh); the addon embeds it, so no .o
# ships beside the .node. libbpf is linked dynamically (Debian's libbpf.a is not PIC). The addon is
# optimized at link time (-flto): the native translator's field writers live in one file per field
# class (addon/ingest-*.c) and are inlined into its pass only so (addon/ingest.c value()).
{
  "targets": [
    {
      "target_name": "probe_skel",
      "type": "none",
      "actions": [
        {
          "action_name": "bpf_skeleton",
          "inputs": [
            "build-skel.sh",
            "src/probe.bpf.c",
            "<!@(ls src/*.h)"
          ],
          "outputs": ["<(SHARED_INTERMEDIATE_DIR)/probe.skel.h"],
          "action": ["bash", "build-skel.sh", "<(SHARED_INTERMEDIATE_DIR)"]
        }
      ]
    },
    {
      "target_name": "rae_probe",
      "dependencies": [
        "probe_skel",
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      "sources": ["addon/addon.cc", "addon/capture.c", "addon/ingest.c", "addon/ingest-path.c", "addon/ingest-evt.c", "addon/ingest-arg.c", "addon/ingest-fd.c", "addon/ingest-proc.c"],
      "include_dirs": ["<(SHARED_INTERMEDIATE_DIR)", "addon"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter", "-flto"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
      "ldflags": ["-flto"],
      "libraries": ["-lbpf", "-lelf", "-lz"]
    },
    {
      "target_name": "rae_watchdog",
      "sources": ["watchdog/watchdog.cc"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-cast-function-type"]
    }
  ]
}
