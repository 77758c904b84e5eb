// One bounded wait for the protocol outputs (NATS, MQTT, Redis, syslog, SMTP), whose clients
// have no per-call timeout of their own: the attempt's reason when `work` rejects, does not
// settle within `ms`, or the output is closed.
import type { AttemptResult } from './types.js';

/** undefined when `work` resolves in time, else why not. */
export async function withDeadline(work: Promise<unknown>, ms: number, signal: AbortSignal): Promise<AttemptResult> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${ms} ms`), ms);
    onAbort = () => resolve('closing');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work.then(() => undefined), limit]);
  } catch (err) {
    return (err as Error).message;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
