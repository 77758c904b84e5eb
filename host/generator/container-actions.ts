// Container actions: rules of the default syscall set that only fire inside a container
// (`container.id != host`), done for real and harmlessly with busybox inside the event
// generator's own container (container.ts, `rae event-generator run --in-container`). The
// container has no network but its loopback; whatever is written stays in its writable layer and
// goes with it. Which behaviour follows falcosecurity/event-generator's events/syscall/*.go.
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import type { Action, ActionContainer } from './types.js';

/** The Kubernetes API server's name in "Contact K8S API Server From Container" (macro k8s_api_server). */
const K8S_API_SERVER = 'kubernetes.default.svc.cluster.local';

/**
 * `nc ... -e /bin/true` connecting to a listener on the container's loopback: busybox nc dup2()s
 * the connected socket onto fds 0 and 1, then execs the program (as upstream's `nc -e` reverse
 * shell, without a shell). The client retries until the listener is up (bounded: 5 s). nc is
 * named by its path: busybox sh runs an applet named without one by re-executing /proc/self/exe,
 * whose process is then named `exe`, not `nc`.
 */
const NC_EXEC = (port: number) => `/bin/nc -l -p ${port} </dev/null >/dev/null & l=$!; i=0; until /bin/nc 127.0.0.1 ${port} -e /bin/true; do i=$((i+1)); if [ $i -ge 50 ]; then kill $l; exit 1; fi; sleep 0.1; done; wait $l`;

/** The container of a container action (runActions gives one to each). */
function box(c: ActionContainer | undefined): ActionContainer {
  if (!c) throw new Error('a container action ran without a container');
  return c;
}

/** Runs `script` in the action's container and requires exit status 0. */
async function must(c: ActionContainer | undefined, script: string, opts?: { tty?: boolean }): Promise<void> {
  const code = await box(c).exec(script, opts);
  if (code !== 0) throw new Error(`sh -c '${script}' in container ${box(c).name} exited with ${code}`);
}

/**
 * Why the node cannot give fd.sip.name for the API server's name: libsinsp's DNS manager
 * (userspace/libsinsp/dns_manager.cpp) resolves the names rules compare on the node itself, which
 * resolves cluster names only when the cluster's DNS is in its resolver configuration.
 */
function k8sApiServerUnavailable(): string | undefined {
  const read = (p: string) => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return '';
    }
  };
  if (read('/etc/hosts').includes(K8S_API_SERVER) || /^search\s.*\bcluster\.local\b/m.test(read('/etc/resolv.conf'))) return undefined;
  return `the node does not resolve ${K8S_API_SERVER} (neither /etc/hosts nor a cluster.local search domain in /etc/resolv.conf): the rule matches fd.sip.name, which comes from the node's resolver`;
}

/** Every container action, in upstream's order of the rules file. */
export const CONTAINER_ACTIONS: Action[] = [
  {
    name: 'syscall.TerminalShellInContainer',
    source: 'syscall',
    rule: 'Terminal shell in container',
    description: 'exec sh with a tty into the container (as docker exec -it / kubectl exec -it)',
    container: { privileged: false },
    run: ({ container }) => must(container, 'exit 0', { tty: true }),
  },
  {
    name: 'syscall.ContactK8SAPIServerFromContainer',
    source: 'syscall',
    rule: 'Contact K8S API Server From Container',
    description: `connect to the address the node resolves for ${K8S_API_SERVER}:443 (the container has no network: the connect fails at once)`,
    container: { privileged: false },
    unavailable: k8sApiServerUnavailable,
    run: async ({ container }) => {
      const { address } = await lookup(K8S_API_SERVER);
      await box(container).exec(`/bin/nc -w 1 ${address} 443 </dev/null`); // ENETUNREACH expected: the connect is what the rule sees
    },
  },
  {
    name: 'syscall.NetcatRemoteCodeExecutionInContainer',
    source: 'syscall',
    rule: 'Netcat Remote Code Execution in Container',
    description: 'nc 127.0.0.1 PORT -e /bin/true to a listener on the container loopback',
    container: { privileged: false },
    run: ({ container }) => must(container, NC_EXEC(4444)),
  },
  {
    name: 'syscall.PacketSocketCreatedInContainer',
    source: 'syscall',
    rule: 'Packet socket created in container',
    description: 'busybox arping opens an AF_PACKET socket (CAP_NET_RAW) on the container loopback (nothing leaves: the container has no network)',
    container: { privileged: false },
    run: async ({ container }) => {
      // arping on lo answers "not ARPable" after it made the socket: the socket is what the rule sees
      await box(container).exec('arping -c 1 -w 1 -I lo 127.0.0.1');
    },
  },
  {
    name: 'syscall.RedirectStdoutStdinToNetworkConnectionInContainer',
    source: 'syscall',
    rule: 'Redirect STDOUT/STDIN to Network Connection in Container',
    description: 'nc -e dup2()s a TCP socket to the container loopback onto stdin and stdout',
    container: { privileged: false },
    run: ({ container }) => must(container, NC_EXEC(4445)),
  },
  {
    name: 'syscall.LinuxKernelModuleInjectionDetected',
    source: 'syscall',
    rule: 'Linux Kernel Module Injection Detected',
    description: 'insmod of a file that is no module, in a privileged container (CAP_SYS_MODULE): the kernel refuses it (ENOEXEC), nothing is loaded',
    container: { privileged: true },
    run: async ({ container }) => {
      const code = await box(container).exec("printf 'not a kernel module' > /tmp/rae-event-generator.ko && insmod /tmp/rae-event-generator.ko");
      if (code === 0) throw new Error('the kernel loaded /tmp/rae-event-generator.ko'); // cannot happen: it has no ELF header
    },
  },
  {
    name: 'syscall.DebugfsLaunchedInPrivilegedContainer',
    source: 'syscall',
    rule: 'Debugfs Launched in Privileged Container',
    description: 'a program named debugfs in a privileged container (busybox under that name: it only says "applet not found", no device is opened)',
    container: { privileged: true },
    run: async ({ container }) => {
      const code = await box(container).exec('ln -sf /bin/busybox /tmp/debugfs && /tmp/debugfs -R stats /dev/null');
      if (code !== 127) throw new Error(`debugfs (busybox) exited with ${code}, not 127 (applet not found)`);
    },
  },
  {
    name: 'syscall.DetectReleaseAgentFileContainerEscapes',
    source: 'syscall',
    rule: 'Detect release_agent File Container Escapes',
    description: 'root with CAP_SYS_ADMIN (privileged container) writes a file named release_agent in /tmp (no cgroup is touched)',
    container: { privileged: true },
    run: ({ container }) => must(container, "echo 'rae event-generator' > /tmp/release_agent"),
  },
  {
    name: 'syscall.DropAndExecuteNewBinaryInContainer',
    source: 'syscall',
    rule: 'Drop and execute new binary in container',
    description: "copy the image's busybox into the container's writable (upper) layer and run the copy",
    container: { privileged: false },
    run: ({ container }) => must(container, 'cp /bin/busybox /tmp/busybox && /tmp/busybox true'),
  },
];
