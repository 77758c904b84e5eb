// Cleanup of machine-level test resources (private containerd, dockerd, podman stores, images)
// when the test process is stopped by a signal (SIGTERM, SIGINT, SIGHUP): `finally` blocks and
// test.after hooks do not run then, and overlay mounts, shims and cgroups would outlive the run.
// A resource registers its own stop; a stop that ran normally unregisters. On a signal the
// registered stops run newest first, each once, and the process exits 128 + the signal number.
// SIGKILL (the runner's per-file timeout) cannot be caught; the next start of the same helper
// does not depend on a clean machine either way.
import { constants } from 'node:os';

type Stop = () => void | Promise<void>;
const stops = new Set<Stop>();
let installed = false;

async function onSignal(sig: NodeJS.Signals): Promise<void> {
  process.stderr.write(`\n${sig}: stopping ${stops.size} test resource(s) before exiting\n`);
  for (const stop of [...stops].reverse()) {
    if (!stops.delete(stop)) continue; // already stopped by a resource stopped before it
    try {
      await stop();
    } catch (e) {
      process.stderr.write(`cleanup: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  }
  process.exit(128 + (constants.signals[sig] ?? 15));
}

/** Runs `stop` if the process gets SIGTERM, SIGINT or SIGHUP first; the returned function unregisters it. */
export function stopOnSignal(stop: Stop): () => void {
  if (!installed) {
    installed = true;
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, (s) => void onSignal(s));
  }
  stops.add(stop);
  return () => stops.delete(stop);
}
