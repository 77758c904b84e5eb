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
 * A TCP connection inside the container: a busybox nc listener on `port`, and `client` (a command
 * connecting to it) retried until the listener is up (bounded: 5 s); then the listener's exit.
 * Programs are named by their path: busybox sh runs an applet named without one by re-executing
 * /proc/self/exe, whose process is then named `exe`, not `nc`.
 */
const NC_PAIR = (port: number, client: string) => `/bin/nc -l -p ${port} </dev/null >/dev/null & l=$!; i=0; until ${client}; do i=$((i+1)); if [ $i -ge 50 ]; then kill $l; exit 1; fi; sleep 0.1; done; wait $l`;

/**
 * `nc ... -e /bin/true` connecting to a listener on the container's loopback: busybox nc dup2()s
 * the connected socket onto fds 0 and 1, then execs the program (as upstream's `nc -e` reverse
 * shell, without a shell).
 */
const NC_EXEC = (port: number) => NC_PAIR(port, `/bin/nc 127.0.0.1 ${port} -e /bin/true`);

/**
 * A connection to `addr:port` that succeeds without leaving the container: `addr` is added to the
 * loopback of the container's own network namespace (CAP_NET_ADMIN: a privileged container), a
 * listener answers there, and the address is removed again. The connect is what the rules see.
 */
const CONNECT_VIA_LOOPBACK = (addr: string, port: number) => `ip addr add ${addr}/32 dev lo || exit 1; (${NC_PAIR(port, `/bin/nc -w 1 ${addr} ${port} </dev/null`)}); r=$?; ip addr del ${addr}/32 dev lo; exit $r`;

/** A program a rule looks for by name, run as busybox under that name ("applet not found", status 127): upstream's SpawnAsWithSymlink. */
const AS_NAMED = (name: string, args = '') => `ln -sf /bin/busybox /tmp/${name} && /tmp/${name}${args ? ` ${args}` : ''}; [ $? -eq 127 ]`;

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
    container: {
      privileged: false,
      runtimeOnly: "the rule's container_entrypoint wants the shell's parent to be the runtime's (proc.pname runc, containerd-shim, conmon, ...): a box's shell is started by the generator (script)",
    },
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
    container: { privileged: true, runtimeOnly: "the rule reads container.privileged=true, which only a runtime's container metadata gives" },
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

/** Why a cgroup box cannot make "Mount Launched in Privileged Container" fire. */
const PRIVILEGED_FROM_RUNTIME = 'the rule matches container.privileged=true, which only the runtime reports';

/**
 * The container actions of upstream's incubating and sandbox rules (falco-incubating_rules.yaml,
 * then falco-sandbox_rules.yaml), each doing inside the container what the rule looks for. Network
 * actions stay in the container's own network namespace.
 */
export const MORE_CONTAINER_ACTIONS: Action[] = [
  // ---- incubating
  {
    name: 'syscall.ChangeNamespacePrivilegesViaUnshare',
    source: 'syscall',
    rule: 'Change namespace privileges via unshare',
    description: 'unshare(CLONE_NEWNET) without CAP_SYS_ADMIN (a plain container): the kernel refuses it, nothing changes',
    container: { privileged: false },
    run: async ({ container }) => {
      const code = await box(container).exec('unshare -n /bin/true');
      if (code === 0) throw new Error('unshare -n succeeded in a container without CAP_SYS_ADMIN');
    },
  },
  {
    name: 'syscall.ContactCloudMetadataServiceFromContainer',
    source: 'syscall',
    rule: 'Contact cloud metadata service from container',
    description: "connect to 169.254.169.254:80, an address put on the loopback of the (privileged) container's own network namespace: nothing leaves it",
    container: { privileged: true },
    run: ({ container }) => must(container, CONNECT_VIA_LOOPBACK('169.254.169.254', 80)),
  },
  {
    name: 'syscall.ExfiltratingArtifactsViaKubernetesControlPlane',
    source: 'syscall',
    rule: 'Exfiltrating Artifacts via Kubernetes Control Plane',
    description: 'tar reads a file in /tmp, started by the runtime itself without a tty (as `kubectl cp` runs `tar cf - FILE`); the archive goes to /dev/null',
    container: { privileged: false, runtimeOnly: "the rule wants tar's parent to be the runtime (container_entrypoint: runc, conmon, containerd-shim...)" },
    run: async ({ container }) => {
      await must(container, "echo 'rae event-generator artifact' > /tmp/rae-artifact");
      const code = await box(container).exec(['tar', 'cf', '/dev/null', '/tmp/rae-artifact']);
      if (code !== 0) throw new Error(`tar cf /dev/null /tmp/rae-artifact exited with ${code}`);
    },
  },
  {
    name: 'syscall.LaunchIngressRemoteFileCopyToolsInContainer',
    source: 'syscall',
    rule: 'Launch Ingress Remote File Copy Tools in Container',
    description: 'busybox wget of a URL on the container loopback where nothing listens (it fails at once)',
    container: { privileged: false },
    run: async ({ container }) => {
      await box(container).exec('/bin/wget -q -O /dev/null http://127.0.0.1:9/');
    },
  },
  {
    name: 'syscall.LaunchPackageManagementProcessInContainer',
    source: 'syscall',
    rule: 'Launch Package Management Process in Container',
    description: "busybox dpkg -l: lists the (empty) package database of the container's image",
    container: { privileged: false },
    run: async ({ container }) => {
      await box(container).exec('/bin/dpkg -l >/dev/null 2>&1');
    },
  },
  {
    name: 'syscall.LaunchRemoteFileCopyToolsInContainer',
    source: 'syscall',
    rule: 'Launch Remote File Copy Tools in Container',
    description: 'a program named scp (busybox under that name: "applet not found")',
    container: { privileged: false },
    run: ({ container }) => must(container, AS_NAMED('scp', 'rae@127.0.0.1:/etc/hostname /tmp')),
  },
  {
    name: 'syscall.LaunchSuspiciousNetworkToolInContainer',
    source: 'syscall',
    rule: 'Launch Suspicious Network Tool in Container',
    description: 'busybox telnet to a port of the container loopback where nothing listens (refused at once)',
    container: { privileged: false },
    run: async ({ container }) => {
      await box(container).exec('/bin/telnet 127.0.0.1 9 </dev/null');
    },
  },
  {
    name: 'syscall.MountLaunchedInPrivilegedContainer',
    source: 'syscall',
    rule: 'Mount Launched in Privileged Container',
    description: 'mount a tmpfs on /tmp/rae-mnt in a privileged container (its own mount namespace), then unmount it',
    container: { privileged: true, runtimeOnly: PRIVILEGED_FROM_RUNTIME },
    run: ({ container }) => must(container, 'mkdir -p /tmp/rae-mnt && /bin/mount -t tmpfs rae-event-generator /tmp/rae-mnt && /bin/umount /tmp/rae-mnt'),
  },
  {
    name: 'syscall.ReadEnvironmentVariableFromProcFiles',
    source: 'syscall',
    rule: 'Read environment variable from /proc files',
    description: 'cat /proc/self/environ (its own environment) to /dev/null',
    container: { privileged: false },
    run: ({ container }) => must(container, '/bin/cat /proc/self/environ >/dev/null'),
  },
  // ---- sandbox
  {
    name: 'syscall.ContainerDriftDetectedChmod',
    source: 'syscall',
    rule: 'Container Drift Detected (chmod)',
    description: 'touch /tmp/rae-drift then chmod 755 it: an execute bit given in the container',
    container: { privileged: false },
    run: ({ container }) => must(container, 'touch /tmp/rae-drift && /bin/chmod 755 /tmp/rae-drift'),
  },
  {
    name: 'syscall.ContainerDriftDetectedOpenCreate',
    source: 'syscall',
    rule: 'Container Drift Detected (open+create)',
    description: 'cp /bin/busybox /tmp/rae-drift-exe: the copy is created with mode 0755 (open O_CREAT with an execute bit)',
    container: { privileged: false },
    run: ({ container }) => must(container, '/bin/cp /bin/busybox /tmp/rae-drift-exe'),
  },
  {
    name: 'syscall.DecodingPayloadInContainer',
    source: 'syscall',
    rule: 'Decoding Payload in Container',
    description: 'echo a base64 payload | base64 -d > /dev/null',
    container: { privileged: false },
    run: ({ container }) => must(container, 'echo cmFlIGV2ZW50LWdlbmVyYXRvcgo= | /bin/base64 -d >/dev/null'),
  },
  {
    name: 'syscall.KubernetesClientToolLaunchedInContainer',
    source: 'syscall',
    rule: 'Kubernetes Client Tool Launched in Container',
    description: 'a program named kubectl (busybox under that name: "applet not found")',
    container: { privileged: false },
    run: ({ container }) => must(container, AS_NAMED('kubectl', 'version')),
  },
  {
    name: 'syscall.ModifyContainerEntrypoint',
    source: 'syscall',
    rule: 'Modify Container Entrypoint',
    description: 'sh opens /proc/self/fd/3 for writing (fd 3: a file in /tmp), the path CVE-2019-5736 writes the runtime binary through',
    container: { privileged: false },
    run: ({ container }) => must(container, 'exec 3>/tmp/rae-entrypoint; echo rae >/proc/self/fd/3'),
  },
  {
    name: 'syscall.UnexpectedK8sNodePortConnection',
    source: 'syscall',
    rule: 'Unexpected K8s NodePort Connection',
    description: "connect to 192.0.2.10:31000 (a NodePort-range port), an address put on the loopback of the (privileged) container's own network namespace",
    container: { privileged: true },
    run: ({ container }) => must(container, CONNECT_VIA_LOOPBACK('192.0.2.10', 31000)),
  },
];
