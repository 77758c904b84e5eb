// The mail falcosidekick's `smtp` output sends for one alert, byte for byte as it builds it
// (outputs/smtp.go and smtp_templates.go in falcosecurity/falcosidekick): a Subject line
// `[<Priority>] <output>`, From, To, Date (`Mon Jan 02 15:04:05 -0700 2006`), MIME-version,
// then with outputformat html a multipart/alternative body (boundary 4t74weu9byeSdJTM) of the
// plain-text rendering and the HTML table, with outputformat text the plain text alone. Values
// in the HTML are escaped as Go's html/template escapes text. Lines end with LF here; the
// SMTP client sends CRLF.
import type { Priority } from '../../engine/priority.js';
import { alertText, sortedTags, type Alert } from '../alert.js';
import { compareCodePoints } from '../json-write.js';
import { goTimeString, goValueText, sidekickFields } from './sidekick-payload.js';

/** The boundary falcosidekick uses. */
const SMTP_BOUNDARY = '4t74weu9byeSdJTM';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** falcosidekick's Date header of a UTC event time. */
export function smtpDate(ns: bigint): string {
  const d = new Date(Number(ns / 1_000_000n));
  const p = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 ${d.getUTCFullYear()}`;
}

/** Go html/template's escaping of text. */
export function htmlEscape(s: string): string {
  const map: Record<string, string> = { '\0': '\uFFFD', '"': '&#34;', '&': '&amp;', "'": '&#39;', '+': '&#43;', '<': '&lt;', '>': '&gt;' };
  return s.replace(/[\0"&'+<>]/g, (c) => map[c] as string);
}

const COLORS: Record<Priority, string> = {
  Emergency: '#e20b0b',
  Alert: '#ff5400',
  Critical: '#ff9000',
  Error: '#ffc700',
  Warning: '#ffff00',
  Notice: '#5bffb5',
  Informational: '#68c2ff',
  Debug: '#ccfff2',
};

/** The alert's fields in Go's map order (sorted keys), as `[key, %v text]`. */
function fieldRows(a: Alert): Array<[string, string]> {
  const fields = sidekickFields(a);
  return Object.keys(fields)
    .sort(compareCodePoints)
    .map((k) => [k, goValueText(fields[k] ?? null)]);
}

/** The plain-text part. */
export function smtpText(a: Alert): string {
  const tags = sortedTags(a.tags)
    .map((t) => `${t} `)
    .join('');
  const fields = fieldRows(a)
    .map(([k, v]) => `${k}: ${v}\n`)
    .join('');
  return `Priority: ${a.priority}\nOutput: ${alertText(a)}\nRule: ${a.rule}\nSource: ${a.source}\nHostname: ${a.hostname}\nTags: ${tags}\nTime: ${goTimeString(a.timeNs)}\n\n--Fields--\n${fields}\n\n`;
}

const TABLE = 'cellpadding="3" cellspacing="0" style="font-family:arial,helvetica,sans-serif; height:2px; width:700px;';
const HEAD = '<td style="background-color:#858585"><span style="font-size:14px;color:#fff;"><strong>';

function row(name: string, value: string, indent = '        '): string {
  return `${indent}<tr>\n            ${HEAD}${name}</strong></span></td>\n            <td style="background-color:#d1d6da">${value}</td>\n        </tr>\n`;
}

/** The HTML part (with the closing boundary the template ends with). */
function smtpHtml(a: Alert): string {
  const e = htmlEscape;
  const tags = sortedTags(a.tags)
    .map((t) => `${e(t)} `)
    .join('');
  const fields = fieldRows(a)
    .map(
      ([k, v]) =>
        `\n        <tr>\n            <td width="1" style="background-color:#858585"><span style="font-size:14px; color:#fff;"><strong>${e(k)}</strong></span></td>\n            <td style="background-color:#d1d6da">${e(v)}</td>\n        </tr>\n    `,
    )
    .join('');
  return (
    '\n'.repeat(12) +
    '<meta http-equiv="Content-Type" content="text/html; charset=us-ascii">\n<style type="text/css">\n    td{font-family:arial,helvetica,sans-serif;}\n</style>\n\n' +
    `<table ${TABLE}">\n    <tbody>\n        <tr>\n            <td><img src="https://raw.githubusercontent.com/cncf/artwork/master/projects/falco/horizontal/color/falco-horizontal-color.png" width="117px" height="47"></td>\n            <td></td>\n        </tr>\n    </tbody>\n</table>\n<br>\n` +
    `<table ${TABLE}">\n    <tbody>\n        <tr>\n            <td style="background-color:${COLORS[a.priority]}; width:700px; text-align:center;"><span style="font-size:12px; color:#fff;"><strong>${e(a.priority)}</strong></span></td>\n        </tr>\n    </tbody>\n</table>\n` +
    '<table cellpadding="5" cellspacing="0" style="font-family:arial,helvetica,sans-serif; width:700px; font-size:13px">\n    <tbody>\n' +
    row('Output', e(alertText(a))) +
    row('Rule', e(a.rule)) +
    row('Source', e(a.source)) +
    row('Hostname', e(a.hostname), '\t\t') +
    row('Tags', tags) +
    row('Time', e(goTimeString(a.timeNs))) +
    '    </tbody>\n</table>\n<br>\n\n' +
    `<table ${TABLE} font-size:13px">\n    <tbody>\n        <tr>\n            <td style="background-color: #858585; width:700px; text-align:center;"><span style="font-size:12px; color:#fff;"><strong>Fields</strong></span></td>\n        </tr>\n    </tbody>\n</table>\n\n` +
    `<table ${TABLE} font-size:13px">\n    <tbody>${fields}</tbody>\n</table>\n\n--${SMTP_BOUNDARY}--`
  );
}

/** The whole message (headers and body) falcosidekick sends; `html` false is outputformat text. */
export function smtpMessage(a: Alert, from: string, to: string, html: boolean): string {
  let m = `Subject: [${a.priority}] ${alertText(a)}\nFrom: ${from}\nTo: ${to}\nDate: ${smtpDate(a.timeNs)}\nMIME-version: 1.0\n`;
  if (html) m += `Content-Type: multipart/alternative; boundary=${SMTP_BOUNDARY}\n\n\n--${SMTP_BOUNDARY}\n`;
  m += 'Content-Type: text/plain; charset="UTF-8"\n\n' + smtpText(a);
  if (html) m += `--${SMTP_BOUNDARY}\nContent-Type: text/html; charset="UTF-8";\n\n` + smtpHtml(a);
  return m;
}
