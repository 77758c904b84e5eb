// `rae event-generator list|run [REGEX]`: the actions that trigger the built-in rules, like
// falcosecurity/event-generator. `list` names the rule each action is meant to trigger (and why
// it cannot work here, when it cannot); `run` performs them and reports each outcome on stdout
// (text, or JSON lines with --json), with a summary on stderr.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { ACTIONS, auditPoster, ContainerRunner, runActions, selectActions, whyUnavailable, type ActionOutcome, type AuditPoster } from '../generator/index.js';
import { webhookUrl } from '../sources/audit/index.js';
import { parseCommandArgs, UsageError, type Command } from './command.js';

const HELP = `Usage: rae event-generator list [REGEX] [--json]
       rae event-generator run [REGEX] [options]

Generates events that the built-in rules detect. Syscall actions perform the behaviour for real
and harmlessly (anything written goes to a temporary directory that is removed afterwards);
audit actions POST a realistic audit event to the engine's audit webhook. REGEX selects actions
by name (e.g. '^syscall\\.', 'Pod'). Actions that cannot work on this machine (no root, no
container, missing program, no webhook CA) are listed with the reason and counted.

Container actions (Terminal shell in container, Drop and execute new binary in container, ...)
run only with --in-container: each runs inside a container that the generator creates through
the first Docker or Podman Engine API socket of the configuration's containers section that
answers (containers.docker.sockets, containers.podman.sockets), from an image built offline from
the node's busybox-static (localhost/rae-event-generator:busybox, loaded when missing and kept).
The containers have no network and are removed at the end, on an error and on SIGINT/SIGTERM.
Never by default: they are real containers on the node's runtime.

Options:
      --webhook-url URL   where audit events go (default: from the configuration,
                          https://127.0.0.1:9765/orchestrator-audit)
      --ca FILE           CA certificate of the webhook (default: webhook.tlsCaFile, else
                          <state-dir>/webhook-tls/ca.crt as written by rae run)
  -c, --config FILE       the configuration of rae run (for the defaults above)
      --state-dir DIR     the state directory of rae run
      --sleep MS          pause between actions (default 100)
      --in-container      run the container actions in containers of the node's runtime
      --json              one JSON object per action instead of text
  -h, --help              show this help

Exit status: 0 every available action was performed, 1 an action failed, 2 bad usage.

Example:
  rae event-generator run '^k8saudit\\.' --state-dir /var/lib/runtime-audit-engine`;

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
function audit(values: { 'webhook-url'?: string; ca?: string; config?: string; 'state-dir'?: string }): { poster?: AuditPoster; unavailable?: string; url: string } {
  const { config, problems } = loadConfig(values.config, values['state-dir']);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `config ${p.key}: ${p.message}`).join('; '));
  const w = config.webhook;
  const url = values['webhook-url'] ?? webhookUrl(w.address, w.port, w.path);
  const ca = values.ca ?? (w.tlsCaFile || join(config.stateDir, 'webhook-tls', 'ca.crt'));
  if (!existsSync(ca)) return { url, unavailable: `no webhook CA certificate at ${ca} (start rae run with the webhook on, or give --ca)` };
  return { url, poster: auditPoster(url, readFileSync(ca, 'utf8')) };
}

function line(o: ActionOutcome): string {
  const status = o.status === 'performed' ? 'performed  ' : o.status === 'unavailable' ? 'unavailable' : 'FAILED     ';
  return `${status} ${o.action} -> ${o.rule}${o.reason ? `: ${o.reason}` : ''}`;
}

export const eventGeneratorCommand: Command = {
  name: 'event-generator',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { 'webhook-url': { type: 'string' }, ca: { type: 'string' }, config: { type: 'string', short: 'c' }, 'state-dir': { type: 'string' }, sleep: { type: 'string' }, json: { type: 'boolean' }, 'in-container': { type: 'boolean' } },
      true,
    );
    const sub = positionals[0];
    if (sub !== 'list' && sub !== 'run') throw new UsageError(sub === undefined ? 'a subcommand is required: list or run' : `unknown subcommand '${sub}' (list or run)`);
    const actions = selectActions(pattern(positionals));
    if (actions.length === 0) throw new UsageError(`no action matches ${positionals[1]} (${ACTIONS.length} actions; see rae event-generator list)`);
    const sleepMs = values.sleep === undefined ? 100 : Number(values.sleep);
    if (!Number.isInteger(sleepMs) || sleepMs < 0) throw new UsageError(`--sleep must be a whole number of milliseconds, not '${values.sleep}'`);
    const a = audit(values);

    if (sub === 'list') {
      // The webhook CA is a matter of how `run` is called: said once, not on every audit action.
      if (a.unavailable && actions.some((x) => x.source === 'k8s_audit')) process.stderr.write(`event-generator: audit actions need the webhook: ${a.unavailable}\n`);
      for (const act of actions) {
        const why = act.container ? whyUnavailable(act, {}) : act.unavailable?.();
        if (values.json) process.stdout.write(`${JSON.stringify({ action: act.name, source: act.source, rule: act.rule, description: act.description, unavailable: why ?? null })}\n`);
        else process.stdout.write(`${act.name.padEnd(58)} ${act.rule}${why ? `  [cannot run here: ${why}]` : ''}\n`);
      }
      return 0;
    }

    process.stderr.write(`event-generator: ${actions.length} action(s); audit events to ${a.url}\n`);
    const c = values['in-container'] && actions.some((x) => x.container) ? await ContainerRunner.open(loadConfig(values.config, values['state-dir']).config.containers, { log: (l) => process.stderr.write(`${l}\n`) }) : undefined;
    let outcomes: ActionOutcome[];
    try {
      outcomes = await runActions(actions, {
        poster: a.poster,
        auditUnavailable: a.unavailable,
        containers: c?.runner,
        containersUnavailable: c?.unavailable,
        sleepMs,
        onOutcome: (o) => process.stdout.write(`${values.json ? JSON.stringify(o) : line(o)}\n`),
      });
    } finally {
      await c?.runner?.close();
    }
    const n = (s: ActionOutcome['status']) => outcomes.filter((o) => o.status === s).length;
    process.stderr.write(`event-generator: ${outcomes.length} action(s): ${n('performed')} performed, ${n('unavailable')} cannot work here, ${n('failed')} failed\n`);
    return n('failed') > 0 ? 1 : 0;
  },
};
