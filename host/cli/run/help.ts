// The help text of `rae run` (Falco's options where Falco has one). Consumed by run.ts.

/** `rae run --help`. */
export const HELP = `Usage: rae run [-c FILE] [-r FILE|DIR ...] [-o KEY=VALUE ...] [--state-dir DIR] [--resources DIR]
               [-T TAG ...|-t TAG ...] [-D SUBSTRING ...] [--dry-run]
       rae run --version | --list[=SOURCE] | --list-events | -L | -l RULE  [--json]

Runs the engine: loads the built-in rules (rules/) and any configured rules files, starts the
enabled sources and servers, prints one line containing 'ready' on stderr once everything is up,
and runs until SIGTERM or SIGINT, which stop it after evaluating the audit events already
accepted (at most webhook.drainTimeoutSeconds). SIGHUP reads the configuration file and the
rules again and swaps the new ruleset into the running engine (rules.builtIn and rules.files
apply live; other changed keys are logged as needing a restart). Detections are written to
stdout as JSON lines; logs go to stderr.

Options (Falco's where Falco has one):
  -c, --config FILE     YAML configuration; every setting has a default, so none is needed;
                        RAE_<SECTION>_<KEY> environment variables then override single keys
                        (e.g. RAE_FORWARDER_WEBHOOKURL=http://sidekick:2801/)
  -o, --option KEY=VALUE  set one configuration key by its dotted path (repeatable), typed by
                        the key: numbers, true/false, lists as [a,b] or the key given again;
                        e.g. -o forwarder.port=2802 -o rules.builtIn=[syscall]
  -r, --rules FILE|DIR  rules file, or directory of *.yaml/*.yml loaded in name order
                        (repeatable; replaces rules.files, as Falco's -r replaces rules_files)
  -T, --disable-tag TAG disable the rules with this tag (repeatable; rules.disableTags)
  -t, --enable-tag TAG  enable only the rules with this tag (repeatable; rules.enableTags;
                        not with -T)
  -D, --disable-rule SUBSTRING  disable the rules whose name contains it (repeatable;
                        rules.disableNames)
  -S, --snaplen LEN     bytes of a syscall's I/O buffer recorded for evt.buffer/evt.arg.data
                        (syscall.snaplen, default 80, at most 4096; copied only for the syscalls
                        of rules that read them)
      --dry-run         load the configuration and the rules, report them, exit 0 (valid) or 1
      --version         print the version and the rules engine version (--json: as JSON)
      --list[=SOURCE]   print the fields of every source, or of syscall or k8s_audit
      --list-events     print the event type names evt.type accepts
  -L, --list-rules      print every loaded rule with its description
  -l, --describe RULE   print one loaded rule: description, condition, output, priority, tags
      --url URL         with -l: add the rule's evaluations, matches and cost from the running
                        engine whose forwarder answers there (e.g. http://127.0.0.1:2801)
      --json            print --version, --list, -L and -l as JSON
      --state-dir DIR   state directory (default: $RAE_STATE_DIR, else /var/lib/runtime-audit-engine
                        as root, else ~/.local/state/runtime-audit-engine)
      --resources DIR   watched directory of ModuleConfig and EngineAuditRules manifests (default:
                        resources.dir, else <state-dir>/resources, created with an enabled
                        ModuleConfig on first start); the sources run only while a ModuleConfig
                        enables the module; see docs/resources.md
  -h, --help            show this help

Components (each can be disabled in the configuration):
  outputs    every detection goes to stdout (Falco's JSON line) and the configured outputs
             (forwarder.stdout, forwarder.outputs.*), whether or not the forwarder runs
  forwarder  falcosidekick's HTTP face on 127.0.0.1:2801: /test, /, /healthz, /readyz, /ping,
             /metrics (forwarder.*); what it receives goes out with the detections;
             /healthz answers 503 while a component is starting or failed
  webhook    orchestrator audit webhook, HTTPS on 127.0.0.1:9765/orchestrator-audit (webhook.*;
             TLS material in <state-dir>/webhook-tls; see rae webhook-config and docs/webhook.md)
  api        error-tracking REST API on 127.0.0.1:8080 (api.*)
  console    web console on 127.0.0.1:2802 once the api is up (console.*; docs/console.md): its
             address is printed on stderr, and on a first start the token to sign in with`;
