// The destination table: one row per destination (settings, defaults, falcosidekick's environment
// names, how to build it). Adding a destination = one file in this folder + one row here (+ a row
// in docs/forwarder.md). resolveOutputs turns the output keys of the forwarder section
// (../config.ts) + the environment into the destinations to run.
import type { ConfigProblem } from '../../config/problem.js';
import type { OutputConfig } from '../config.js';
import { coerce, commonSettings, resolveRow, type OutputRow, type ResolvedOutput, type SettingSpec } from './settings.js';
import { parseTemplate } from './template.js';
import { checkAppendOutput } from '../falco-json.js';
import { parseDuration } from '../time.js';

const str = (def: string, doc: string, extra: Partial<SettingSpec> = {}): SettingSpec => ({ kind: 'string', default: def, doc, ...extra });
const bool = (def: boolean, doc: string): SettingSpec => ({ kind: 'boolean', default: def, doc });
const map = (doc: string): SettingSpec => ({ kind: 'map', default: {}, doc });
const oneOf =
  (...allowed: string[]) =>
  (v: unknown) =>
    allowed.includes(v as string) ? undefined : `expected one of ${allowed.join(', ')}`;

const FOOTER = 'https://github.com/falcosecurity/falcosidekick';

function templateCheck(v: unknown): string | undefined {
  try {
    parseTemplate(v as string);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** falcosidekick's icon for the chat outputs. */
const FALCOSIDEKICK_ICON = 'https://raw.githubusercontent.com/falcosecurity/falcosidekick/master/imgs/falcosidekick_color.png';

function httpUrl(v: unknown): string | undefined {
  if (v === '') return undefined;
  try {
    const u = new URL(v as string);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : `must be http:// or https://, not ${u.protocol}`;
  } catch {
    return `${JSON.stringify(v)} is not a URL`;
  }
}

/** TLS settings shared by the HTTP outputs. */
const TLS = {
  checkcert: bool(true, 'verify the server certificate'),
  mutualtls: bool(false, 'present the client certificate (mtlsclientcert/key)'),
  mtlsclientcert: str('', 'client certificate (PEM file)', { env: 'MUTUALTLSCLIENT_CERTFILE' }),
  mtlsclientkey: str('', 'client key (PEM file)', { env: 'MUTUALTLSCLIENT_KEYFILE' }),
  mtlscacert: str('', 'CA certificate(s) to verify the server with (PEM file)', { env: 'MUTUALTLSCLIENT_CACERTFILE' }),
};

/** Most rows of one store INSERT: 13 parameters a row (store.ts), PostgreSQL takes at most 65535 a statement. */
const STORE_MAX_BATCH = 5000;

/** Every output. The order is the order outputs start in. */
export const OUTPUTS: OutputRow[] = [
  {
    name: 'webhook',
    env: 'WEBHOOK',
    enabledBy: 'address',
    settings: {
      address: str('', 'URL the alert JSON is sent to (forwarder.webhookUrl is the same setting)', { check: httpUrl }),
      method: str('POST', 'HTTP method', { check: oneOf('POST', 'PUT') }),
      customheaders: map('extra request headers (env `Name:value,Name2:value2`)'),
      gzip: bool(false, 'gzip the body (`Content-Encoding: gzip`)'),
      ...TLS,
    },
    create: async (s, ctx) => (await import('./webhook.js')).createWebhookSender(s, ctx),
  },
  {
    name: 'file',
    env: 'FILE_OUTPUT',
    enabledBy: 'filename',
    settings: {
      filename: str('', 'file the alert lines are appended to (Falco file_output.filename)'),
      keep_alive: bool(false, 'keep the file open (Falco file_output.keep_alive); else open and close per write'),
    },
    create: async (s) => (await import('./file.js')).createFileSender(s),
  },
  {
    name: 'program',
    env: 'PROGRAM_OUTPUT',
    enabledBy: 'program',
    settings: {
      program: str('', 'shell command receiving the alert lines on stdin (Falco program_output.program)'),
      keep_alive: bool(false, 'one long-running process (Falco program_output.keep_alive); else one per alert'),
    },
    create: async (s, ctx) => (await import('./program.js')).createProgramSender(s, ctx),
  },
  {
    name: 'slack',
    env: 'SLACK',
    enabledBy: 'webhookurl',
    settings: {
      webhookurl: str('', 'Slack incoming-webhook URL', { check: httpUrl }),
      channel: str('', 'channel override'),
      footer: str(FOOTER, 'attachment footer'),
      username: str('Falcosidekick', 'sender name'),
      icon: str(FALCOSIDEKICK_ICON, 'sender icon URL'),
      outputformat: str('all', '`all`, `text` (the alert line) or `fields`', { check: oneOf('all', 'text', 'fields') }),
      messageformat: str('', 'message text template (`{{ .Rule }}`, `{{ .Priority }}`, `{{ .Output }}`, `{{ index .OutputFields "k" }}` ...)', { check: templateCheck }),
      ...TLS,
    },
    create: async (s) => (await import('./slack.js')).createSlackSender(s),
  },
  {
    name: 'teams',
    env: 'TEAMS',
    enabledBy: 'webhookurl',
    settings: {
      webhookurl: str('', 'Teams incoming-webhook URL', { check: httpUrl }),
      activityimage: str(FALCOSIDEKICK_ICON, 'image of the card section'),
      outputformat: str('all', '`all`, `text` or `facts`', { check: oneOf('all', 'text', 'facts') }),
      ...TLS,
    },
    create: async (s) => (await import('./teams.js')).createTeamsSender(s),
  },
  {
    name: 'mattermost',
    env: 'MATTERMOST',
    enabledBy: 'webhookurl',
    settings: {
      webhookurl: str('', 'Mattermost incoming-webhook URL', { check: httpUrl }),
      footer: str(FOOTER, 'attachment footer'),
      username: str('Falcosidekick', 'sender name'),
      icon: str(FALCOSIDEKICK_ICON, 'sender icon URL'),
      outputformat: str('all', '`all`, `text` or `fields`', { check: oneOf('all', 'text', 'fields') }),
      messageformat: str('', 'message text template (as slack.messageformat)', { check: templateCheck }),
      ...TLS,
    },
    create: async (s) => (await import('./mattermost.js')).createMattermostSender(s),
  },
  {
    name: 'discord',
    env: 'DISCORD',
    enabledBy: 'webhookurl',
    settings: {
      webhookurl: str('', 'Discord webhook URL', { check: httpUrl }),
      icon: str(FALCOSIDEKICK_ICON, 'avatar URL'),
      ...TLS,
    },
    create: async (s) => (await import('./discord.js')).createDiscordSender(s),
  },
  {
    name: 'googlechat',
    env: 'GOOGLECHAT',
    enabledBy: 'webhookurl',
    settings: {
      webhookurl: str('', 'Google Chat webhook URL', { check: httpUrl }),
      outputformat: str('all', '`all` (card) or `text` (messageformat only)', { check: oneOf('all', 'text') }),
      messageformat: str('', 'message text template (as slack.messageformat)', { check: templateCheck }),
      ...TLS,
    },
    create: async (s) => (await import('./googlechat.js')).createGooglechatSender(s),
  },
  {
    name: 'alertmanager',
    env: 'ALERTMANAGER',
    enabledBy: 'hostport',
    settings: {
      hostport: str('', 'http://host:port of Alertmanager', { check: httpUrl }),
      endpoint: str('/api/v1/alerts', 'path alerts are posted to: /api/v1/alerts or /api/v2/alerts'),
      expiresafter: { kind: 'number', default: 0, doc: 'when not 0, endsAt = event time + this many seconds' },
      extralabels: map('labels added to every alert (env `name:value,name2:value2`)'),
      extraannotations: map('annotations added to every alert (env `name:value,...`)'),
      customseveritymap: map('priority -> severity overrides (env `debug:info,critical:page`); default emergency/alert/critical: critical, error/warning: warning, others: information'),
      dropeventdefaultpriority: str('critical', 'priority of syscall-drop alerts (n_drop* fields) below every threshold'),
      dropeventthresholds: str('10000:critical, 1000:critical, 100:critical, 10:warning, 1:warning', 'syscall-drop counts above a threshold raise the alert to its priority'),
      customheaders: map('extra request headers (env `Name:value,...`)'),
      ...TLS,
    },
    create: async (s, ctx) => (await import('./alertmanager.js')).createAlertmanagerSender(s, ctx),
  },
  {
    name: 'loki',
    env: 'LOKI',
    enabledBy: 'hostport',
    settings: {
      hostport: str('', 'http://host:port of Loki', { check: httpUrl }),
      endpoint: str('/loki/api/v1/push', 'push API path'),
      user: str('', 'basic-auth user (with apikey)'),
      apikey: str('', 'basic-auth password (with user)'),
      tenant: str('', 'X-Scope-OrgID header when set'),
      format: str('text', 'log line: text (the output) or json (the falcosidekick payload)', { check: oneOf('text', 'json') }),
      extralabels: { kind: 'list', default: [], doc: 'output fields also sent as stream labels (besides customfields and templatedfields)' },
      customheaders: map('extra request headers (env `Name:value,...`)'),
      ...TLS,
    },
    create: async (s, ctx) => (await import('./loki.js')).createLokiSender(s, ctx),
  },
  {
    name: 'nats',
    env: 'NATS',
    enabledBy: 'hostport',
    settings: {
      hostport: str('', 'nats://host:port'),
      subjecttemplate: str('falco.<priority>.<rule>', 'subject; <priority> and <rule> are replaced (lower case, rule slugged)'),
    },
    create: async (s, ctx) => (await import('./nats.js')).createNatsSender(s, ctx),
  },
  {
    name: 'mqtt',
    env: 'MQTT',
    enabledBy: 'broker',
    settings: {
      broker: str('', 'tcp://host:port or ssl://host:port'),
      topic: str('falco/events', 'topic'),
      qos: { kind: 'number', default: 0, doc: 'QoS 0, 1 or 2', check: (v) => ([0, 1, 2].includes(v as number) ? undefined : 'expected 0, 1 or 2') },
      retained: bool(false, 'publish retained'),
      user: str('', 'user (with password)'),
      password: str('', 'password (with user)'),
      checkcert: bool(true, 'verify the broker certificate (ssl://)'),
    },
    create: async (s, ctx) => (await import('./mqtt.js')).createMqttSender(s, ctx),
  },
  {
    name: 'redis',
    env: 'REDIS',
    enabledBy: 'address',
    settings: {
      address: str('', 'host:port'),
      database: { kind: 'number', default: 0, doc: 'database number' },
      storagetype: str('list', 'list (RPUSH) or hashmap (HSET key uuid payload)', { check: oneOf('list', 'hashmap') }),
      key: str('falco', 'key of the list or hash'),
      username: str('', 'ACL user'),
      password: str('', 'password'),
    },
    create: async (s, ctx) => (await import('./redis.js')).createRedisSender(s, ctx),
  },
  {
    name: 'syslog',
    env: 'SYSLOG',
    enabledBy: 'host',
    settings: {
      host: str('', 'syslog server host'),
      port: str('', 'its port'),
      protocol: str('tcp', 'tcp or udp', { check: oneOf('tcp', 'udp') }),
      format: str('json', 'json (falcosidekick payload) or cef', { check: oneOf('json', 'cef') }),
    },
    create: async (s, ctx) => (await import('./syslog.js')).createSyslogSender(s, ctx),
  },
  {
    name: 'smtp',
    env: 'SMTP',
    enabledBy: 'hostport',
    settings: {
      hostport: str('', 'host:port of the SMTP server'),
      tls: bool(true, 'require STARTTLS'),
      authmechanism: str('plain', "plain or none (falcosidekick's oauthbearer/external/anonymous are not supported)", { check: oneOf('plain', 'none', '') }),
      user: str('', 'user (plain)'),
      password: str('', 'password (plain)'),
      token: str('', 'accepted for falcosidekick compatibility; unused (oauthbearer is not supported)'),
      identity: str('', 'accepted for compatibility; unused'),
      trace: str('', 'accepted for compatibility; unused'),
      from: str('', 'sender address (required)'),
      to: str('', 'comma-separated recipients (required)'),
      outputformat: str('html', 'html (multipart text + HTML) or text', { check: oneOf('html', 'text') }),
    },
    create: async (s, ctx) => (await import('./smtp.js')).createSmtpSender(s, ctx),
  },
  {
    name: 'store',
    env: 'STORE',
    enabledBy: 'enabled',
    settings: {
      enabled: bool(true, "store every alert in the API's database (PGlite, or PostgreSQL with DATABASE_URL) for the query API (docs/console.md); off when api.enabled is false"),
      batchsize: {
        kind: 'number',
        default: 500,
        doc: `most alerts one INSERT writes (1..${STORE_MAX_BATCH})`,
        check: (v) => (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= STORE_MAX_BATCH ? undefined : `expected a whole number from 1 to ${STORE_MAX_BATCH}`),
      },
      maxage: str('30d', 'retention by age: rows whose event time is older are deleted (`12h`, `30d`, `1y`; `0` keeps every age)', {
        check: (v) => (parseDuration(v as string) === undefined ? 'expected a duration: a number with s, m, h, d, w, M or y (e.g. 30d), or 0' : undefined),
      }),
      maxrows: {
        kind: 'number',
        default: 1_000_000,
        doc: 'retention by count: all but the newest this many rows are deleted (0 = no limit)',
        check: (v) => (Number.isInteger(v) && (v as number) >= 0 ? undefined : 'expected a whole number, 0 or more'),
      },
      retentionseconds: {
        kind: 'number',
        default: 60,
        doc: 'least time between two retention passes (each runs after a stored batch)',
        check: (v) => (Number.isInteger(v) && (v as number) >= 0 ? undefined : 'expected a whole number, 0 or more'),
      },
    },
    create: async (s, ctx) => (await import('./store.js')).createStoreSender(s, ctx),
  },
];

/** Global fields added to every alert on every output (falcosidekick's customfields/templatedfields). */
export interface GlobalFields {
  customfields: Record<string, string>;
  templatedfields: Record<string, string>;
}

function resolveGlobal(fc: OutputConfig, env: NodeJS.ProcessEnv, problems: ConfigProblem[]): GlobalFields {
  const out: GlobalFields = { customfields: { ...fc.customfields }, templatedfields: { ...fc.templatedfields } };
  for (const [key, name] of [
    ['customfields', 'CUSTOMFIELDS'],
    ['templatedfields', 'TEMPLATEDFIELDS'],
  ] as const) {
    const c = coerce('map', out[key], false);
    if (typeof c === 'string') problems.push({ key: `forwarder.${key}`, message: c });
    else out[key] = c.value as Record<string, string>;
    const text = env[name];
    if (text !== undefined) out[key] = { ...out[key], ...(coerce('map', text, true) as { value: Record<string, string> }).value };
  }
  for (const [k, t] of Object.entries(out.templatedfields)) {
    try {
      parseTemplate(t);
    } catch (err) {
      problems.push({ key: `forwarder.templatedfields.${k}`, message: (err as Error).message });
    }
  }
  return out;
}

/** Outputs to run (enabled rows, in table order) and the global fields; problems name the key. */
export function resolveOutputs(fc: OutputConfig, env: NodeJS.ProcessEnv): { outputs: ResolvedOutput[]; global: GlobalFields; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const raw: Record<string, unknown> = {};
  const names = new Set(OUTPUTS.map((r) => r.name as string));
  if (fc.outputs !== null && typeof fc.outputs === 'object' && !Array.isArray(fc.outputs)) {
    for (const [k, v] of Object.entries(fc.outputs)) {
      if (names.has(k.toLowerCase())) raw[k.toLowerCase()] = v;
      else problems.push({ key: `forwarder.outputs.${k}`, message: `unknown output (known: ${[...names].join(', ')})` });
    }
  } else problems.push({ key: 'forwarder.outputs', message: 'expected a mapping' });
  const common = commonSettings({ retries: fc.webhookRetries, timeoutMs: fc.webhookTimeoutMs, queueSize: fc.queueSize });
  // forwarder.webhookUrl (the original setting) is the webhook output's address.
  const legacyProblem = fc.webhookUrl === '' ? undefined : httpUrl(fc.webhookUrl);
  if (legacyProblem) problems.push({ key: 'forwarder.webhookUrl', message: legacyProblem });
  else if (fc.webhookUrl !== '') {
    const w = (raw.webhook ?? {}) as Record<string, unknown>;
    if (typeof w === 'object' && w.address !== undefined && w.address !== fc.webhookUrl) problems.push({ key: 'forwarder.webhookUrl', message: 'conflicts with forwarder.outputs.webhook.address (set one)' });
    else raw.webhook = { ...w, address: fc.webhookUrl };
  }
  const outputs = OUTPUTS.map((row) => resolveRow(row, raw[row.name], env, common, problems)).filter((r) => r.enabled);
  checkAppendOutput(fc.falco.append_output, problems);
  return { outputs, global: resolveGlobal(fc, env, problems), problems };
}
