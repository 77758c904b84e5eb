// `rae event-generator list|run [REGEX]`: the actions that trigger the built-in rules, like
// falcosecurity/event-generator, with its habits: --all, --loop, --sleep DURATION. `list` names
// the rule each action is meant to trigger and its set (and why it cannot work here, when it
// cannot); `run` performs them and reports each outcome on stdout (text, or JSON lines with
// --json), then a table on stderr: performed, detected (the forwarder's alert counter per rule),
// unavailable with the reason.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '../config/config.js';
import {
  ACTIONS,
  auditPoster,
  CgroupBoxes,
  ContainerRunner,
  fetchAlertCounts,
  firedSince,
  maturityOf,
  NO_CONTAINER,
  parseDurationMs,
  renderTable,
  ruleOrigin,
  RunTally,
  runActions,
  runtimeOnly,
  selectActions,
  type ActionOutcome,
  type AuditPoster,
  type ContainerHost,
  type Detection,
} from '../generator/index.js';

import { webhookUrl } from '../sources/audit/index.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';

const HELP = `Usage: rae event-generator list [REGEX] [--all] [--json]
       rae event-generator run [REGEX] [options]

Generates events that the built-in rules detect. Syscall actions perform the behaviour for real
and harmlessly (anything written goes to a temporary directory that is removed afterwards, or to
an overlay of a system directory in a private mount namespace whose upper layer is that
directory; network actions stay on the loopback of a private network namespace); audit actions
POST a realistic audit event to the engine's audit webhook. REGEX selects actions by name (e.g.
'^syscall\\.', 'Pod'). As upstream's event-generator, only the actions of stable rules are
selected unless --all. Actions that cannot work on this machine (no root, no container, missing
program, no webhook CA, a field the engine does not provide yet) are listed with the reason and
counted. run ends with a table on stderr: each action's set, what was performed, whether its rule
fired (read from the forwarder's /metrics alert counter), and why it was not performed.

Container actions (Terminal shell in container, Drop and execute new binary in container, ...)
run inside a container, chosen by --containers:
  auto     (default) a runtime's container when one answers, else a cgroup box
  runtime  a container that the generator creates through the first Docker or Podman Engine API
           socket of the configuration's containers section that answers
           (containers.docker.sockets, containers.podman.sockets), from an image built offline
           from the node's busybox-static (localhost/rae-event-generator:busybox, loaded when
           missing and kept); --in-container is the same
  cgroup   a cgroup box, made by the generator without a runtime (root, cgroup v2, util-linux,
           busybox-static, overlayfs): the busybox rootfs on an overlay, in its own mount and
           network namespaces, in a cgroup named like a container's (a 64-hex id), without
           CAP_SYS_ADMIN unless privileged. It has no container metadata (name, image,
           privileged) and no runtime parent process: the actions whose rule reads those need a
           runtime and are unavailable in a box, with the reason
  none     container actions are not run (unavailable)
Containers and boxes have no network but their loopback and are removed at the end, on an error
and on SIGINT/SIGTERM/SIGHUP.

Options:
      --all               also the actions of incubating and sandbox rules
      --loop              run the actions again and again until SIGINT or SIGTERM, then the table
      --sleep DURATION    pause between actions: 100ms, 1s, 1m30s, or whole milliseconds
                          (default 100ms)
      --webhook-url URL   where audit events go (default: from the configuration,
                          https://127.0.0.1:9765/orchestrator-audit)
      --ca FILE           CA certificate of the webhook (default: webhook.tlsCaFile, else
                          <state-dir>/webhook-tls/ca.crt as written by rae run)
      --cert FILE, --key FILE  the client certificate and key presented to the webhook
                          (default: client.crt and client.key beside --ca when given, else
                          webhook.clientCertFile and clientKeyFile, else in
                          <state-dir>/webhook-tls/, issued by the engine's CA; without them
                          audit events reach only a webhook with webhook.requireClientCert false)
      --metrics-url URL   the forwarder's /metrics, read to tell which rules fired (default: from
                          the configuration, http://127.0.0.1:2801/metrics)
      --detect-wait DURATION  how long to wait for the rules of performed actions to fire
                          after the last action (default 10s; 0: read once)
  -c, --config FILE       the configuration of rae run (for the defaults above)
      --state-dir DIR     the state directory of rae run
      --containers MODE   where container actions run: auto, runtime, cgroup or none
                          (default auto; see above)
      --in-container      the same as --containers runtime
      --json              one JSON object per action instead of text
  -h, --help              show this help

Exit status: 0 every available action was performed, 1 an action failed, 2 bad usage.

Example:
  rae event-generator run '^k8saudit\\.' --state-dir /var/lib/runtime-audit-engine
  rae event-generator run --all --loop --sleep 1s`;

function pattern(positionals: string[]): RegExp | undefined {
  const src = positionals[1];
  if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}'`);
  if (src === undefined) return undefined;
  try {
    return new RegExp(src);
  } catch (err) {
    throw new UsageError(`invalid REGEX: ${(err as Error).message}`);
  }
}

/** The poster from options and configuration, or why there is none. */
function audit(values: { 'webhook-url'?: string; ca?: string; cert?: string; key?: string; config?: string; 'state-dir'?: string }): { poster?: AuditPoster; unavailable?: string; url: string } {
  const { config, problems } = loadConfig(values.config, values['state-dir']);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `config ${p.key}: ${p.message}`).join('; '));
  if ((values.cert === undefined) !== (values.key === undefined)) throw new UsageError('--cert and --key go together');
  const w = config.webhook;
  const url = values['webhook-url'] ?? webhookUrl(w.address, w.port, w.path);
  const ca = values.ca ?? (w.tlsCaFile || join(config.stateDir, 'webhook-tls', 'ca.crt'));
  if (!existsSync(ca)) return { url, unavailable: `no webhook CA certificate at ${ca} (start rae run with the webhook on, or give --ca)` };
  // The engine's client certificate (the one `rae webhook-config` gives the API server); when the
  // defaults are absent, none is presented and a webhook that requires one refuses the posts.
  // A configured pair (webhook.clientCertFile, as deploy/ issues one for the whole cluster) is required to be readable.
  const tlsDir = values.ca !== undefined ? dirname(values.ca) : join(config.stateDir, 'webhook-tls');
  const configuredPair = values.ca === undefined && w.clientCertFile !== '';
  const cert = values.cert ?? (configuredPair ? w.clientCertFile : join(tlsDir, 'client.crt'));
  const key = values.key ?? (configuredPair ? w.clientKeyFile : join(tlsDir, 'client.key'));
  if (values.cert === undefined && !configuredPair && !(existsSync(cert) && existsSync(key))) return { url, poster: auditPoster(url, { caPem: readFileSync(ca, 'utf8') }) };
  try {
    return { url, poster: auditPoster(url, { caPem: readFileSync(ca, 'utf8'), certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') }) };
  } catch (err) {
    return { url, unavailable: `cannot read the client certificate ${cert} and key ${key}: ${(err as Error).message}` };
  }
}

/** The forwarder's /metrics from options and configuration, or why alerts cannot be observed. */
function metricsSource(values: { 'metrics-url'?: string; config?: string; 'state-dir'?: string }): { url: string } | { unobservable: string } {
  if (values['metrics-url']) return { url: values['metrics-url'] };
  const f = loadConfig(values.config, values['state-dir']).config.forwarder;
  if (!f.enabled) return { unobservable: 'the forwarder is off (forwarder.enabled false): give --metrics-url' };
  const host = f.address.includes(':') ? `[${f.address}]` : f.address;
  return { url: `${f.tlsCertFile && f.tlsKeyFile ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${f.port}/metrics` };
}

function duration(flag: string, text: string | undefined, dflt: number): number {
  if (text === undefined) return dflt;
  const ms = parseDurationMs(text);
  if (ms === undefined) throw new UsageError(`${flag} must be a duration (100ms, 1s, 1m30s) or whole milliseconds, not '${text}'`);
  return ms;
}

const MODES = ['auto', 'runtime', 'cgroup', 'none'] as const;
type ContainersMode = (typeof MODES)[number];

/** --containers, with --in-container as `runtime`. */
function containersMode(values: { containers?: string; 'in-container'?: boolean }): ContainersMode {
  const m = values.containers ?? (values['in-container'] ? 'runtime' : 'auto');
  if (!(MODES as readonly string[]).includes(m)) throw new UsageError(`--containers must be one of ${MODES.join(', ')}, not '${m}'`);
  if (values['in-container'] && m !== 'runtime') throw new UsageError(`--in-container is --containers runtime, not ${m}`);
  return m as ContainersMode;
}

/** Where container actions run: a runtime's containers, cgroup boxes, or nowhere and why. */
async function containerHost(mode: ContainersMode, values: { config?: string; 'state-dir'?: string }): Promise<{ runner?: ContainerHost; unavailable?: string }> {
  if (mode === 'none') return { unavailable: NO_CONTAINER };
  const log = (l: string) => process.stderr.write(`${l}\n`);
  let runtime: { runner?: ContainerHost; unavailable?: string } | undefined;
  if (mode !== 'cgroup') {
    runtime = await ContainerRunner.open(loadConfig(values.config, values['state-dir']).config.containers, { log });
    if (runtime.runner || mode === 'runtime') return runtime;
  }
  const boxes = await CgroupBoxes.open({ log });
  if (boxes.unavailable) return { unavailable: runtime ? `${runtime.unavailable}; and ${boxes.unavailable}` : boxes.unavailable };
  if (runtime) log(`event-generator: container actions in cgroup boxes (no runtime: ${runtime.unavailable})`);
  return boxes;
}

function line(o: ActionOutcome): string {
  const status = o.status === 'performed' ? 'performed  ' : o.status === 'unavailable' ? 'unavailable' : 'FAILED     ';
  return `${status} ${o.action} -> ${o.rule}${o.reason ? `: ${o.reason}` : ''}`;
}

/** Which of the performed rules fired, waiting up to `waitMs` for them all. */
async function detection(source: ReturnType<typeof metricsSource>, before: Map<string, number> | string, rules: Set<string>, waitMs: number): Promise<Detection> {
  if ('unobservable' in source) return source;
  if (typeof before === 'string') return { unobservable: before };
  const deadline = Date.now() + waitMs;
  for (;;) {
    let fired: Set<string>;
    try {
      fired = firedSince(before, await fetchAlertCounts(source.url), rules);
    } catch (err) {
      return { unobservable: (err as Error).message };
    }
    if (fired.size === rules.size || Date.now() >= deadline) return { fired };
    await new Promise((r) => setTimeout(r, 250));
  }
}

export const eventGeneratorCommand: Command = {
  name: 'event-generator',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        'webhook-url': { type: 'string' },
        ca: { type: 'string' },
        cert: { type: 'string' },
        key: { type: 'string' },
        config: { type: 'string', short: 'c' },
        'state-dir': { type: 'string' },
        sleep: { type: 'string' },
        json: { type: 'boolean' },
        all: { type: 'boolean' },
        loop: { type: 'boolean' },
        'metrics-url': { type: 'string' },
        'detect-wait': { type: 'string' },
        'in-container': { type: 'boolean' },
        containers: { type: 'string' },
      },
      true,
    );
    const sub = positionals[0];
    if (sub !== 'list' && sub !== 'run') throw new UsageError(sub === undefined ? 'a subcommand is required: list or run' : `unknown subcommand '${sub}' (list or run)`);
    const actions = selectActions(pattern(positionals), { all: values.all });
    if (actions.length === 0) throw new UsageError(`no action matches ${positionals[1] ?? ''}${values.all ? '' : ' among the actions of stable rules (--all for every set)'} (${ACTIONS.length} actions; see rae event-generator list --all)`);
    const sleepMs = duration('--sleep', values.sleep, 100);
    const waitMs = duration('--detect-wait', values['detect-wait'], 10_000);
    const a = audit(values);
    const mode = containersMode(values);

    if (sub === 'list') {
      // The webhook CA is a matter of how `run` is called: said once, not on every audit action.
      if (a.unavailable && actions.some((x) => x.source === 'k8s_audit')) process.stderr.write(`event-generator: audit actions need the webhook: ${a.unavailable}\n`);
      for (const act of actions) {
        // list makes no container: only what the mode alone decides is said
        const why = act.container && mode === 'none' ? NO_CONTAINER : act.container?.runtimeOnly && mode === 'cgroup' ? runtimeOnly(act.container.runtimeOnly) : act.unavailable?.();
        const origin = ruleOrigin(act.rule);
        const off = origin && !origin.enabled ? 'disabled by default in its set' : undefined;
        if (values.json)
          process.stdout.write(
            `${JSON.stringify({ action: act.name, source: act.source, rule: act.rule, set: origin?.set ?? null, maturity: maturityOf(act), ruleEnabled: origin?.enabled ?? false, description: act.description, unavailable: why ?? null })}\n`,
          );
        else process.stdout.write(`${act.name.padEnd(76)} ${maturityOf(act).padEnd(10)} ${act.rule}${off ? ` (${off})` : ''}${why ? `  [cannot run here: ${why}]` : ''}\n`);
      }
      return 0;
    }

    const metrics = metricsSource(values);
    const before = 'url' in metrics ? await fetchAlertCounts(metrics.url).catch((err: Error) => err.message) : metrics.unobservable;
    let stopped: string | undefined;
    const stop = (signal: string) => () => {
      stopped = signal;
    };
    const onInt = stop('SIGINT');
    const onTerm = stop('SIGTERM');
    if (values.loop) {
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
    }
    process.stderr.write(`event-generator: ${actions.length} action(s)${values.loop ? ', in a loop until SIGINT or SIGTERM' : ''}; audit events to ${a.url}\n`);
    const tally = new RunTally();
    const c = actions.some((x) => x.container) ? await containerHost(mode, values) : undefined;
    try {
      do {
        await runActions(actions, {
          poster: a.poster,
          auditUnavailable: a.unavailable,
          containers: c?.runner,
          containersUnavailable: c?.unavailable,
          sleepMs,
          stopped: () => stopped !== undefined,
          onOutcome: (o) => {
            tally.add(o);
            process.stdout.write(`${values.json ? JSON.stringify(o) : line(o)}\n`);
          },
        });
        tally.rounds++;
        if (values.loop && stopped === undefined && sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
      } while (values.loop && stopped === undefined);
    } finally {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      await c?.runner?.close();
    }
    if (stopped) process.stderr.write(`event-generator: stopped by ${stopped}\n`);
    const rows = tally.rows();
    const n = (f: (t: (typeof rows)[number]) => boolean) => rows.filter(f).length;
    const detected = await detection(metrics, before, tally.performedRules(), waitMs);
    process.stderr.write(renderTable(tally, detected));
    const failed = n((t) => t.failed > 0);
    process.stderr.write(`event-generator: ${rows.length} action(s): ${n((t) => t.performed > 0 && t.failed === 0)} performed, ${n((t) => t.performed === 0 && t.failed === 0)} cannot work here, ${failed} failed\n`);
    return failed > 0 ? 1 : 0;
  },
};
