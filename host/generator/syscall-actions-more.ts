// The syscall actions of falcosecurity/event-generator (events/syscall/*.go) beyond the stable
// rules' ones in syscall-actions.ts: the actions of the incubating and sandbox rules, each doing
// what upstream's does, harmlessly. Writes below system directories go through an overlay in a
// private mount namespace whose upper layer is the action's temporary directory (isolate.ts);
// network actions use an address on the loopback of a private network namespace; programs a
// rule looks for by name are harmless programs run under that name (upstream's
// SpawnAsWithSymlink). Actions of rules that only fire inside a container are in
// container-actions.ts.
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { first, isRoot, mustRun, needs, which } from './exec.js';
import { asNobody, nobodyUnavailable, inOverlay, inPrivateNet, linkAs, overlayUnavailable, perlTcpLoop, perlUdpSend, PRIVATE_NET_ADDR, privateNetUnavailable, shQuote } from './isolate.js';
import { builtinList } from './rule-sets.js';
import { Unavailable, type Action } from './types.js';

/** Syscall numbers perl needs for these actions, per architecture (from the kernel's syscall tables). */
const NR: Record<string, { setns: number; setuid: number; userfaultfd: number }> = {
  x64: { setns: 308, setuid: 105, userfaultfd: 323 },
  arm64: { setns: 268, setuid: 146, userfaultfd: 282 },
};
const nr = () => NR[process.arch]!;

const rawSyscalls = () => (!which('perl') ? 'needs perl (Debian perl-base) to make the raw syscall' : NR[process.arch] ? undefined : `no syscall numbers for architecture ${process.arch}`);
const root = (why: string) => () => (isRoot() ? undefined : `needs root (${why})`);

/** The IPv4 address of the first of `names` that resolves. */
async function firstResolved(names: string[]): Promise<string> {
  for (const name of names) {
    try {
      return (await lookup(name, { family: 4 })).address;
    } catch {
      // the next one
    }
  }
  throw new Unavailable(`none of the ${names.length} miner pool names of the rule (miner_domains) resolves on this node`);
}

/** A sh script for inOverlay that writes an empty file with touch (open O_WRONLY|O_CREAT: open_write). */
const touch = (path: string) => `touch ${shQuote(path)}`;

/** Every syscall action of upstream's incubating and sandbox rules. */
export const MORE_SYSCALL_ACTIONS: Action[] = [
  // ---- incubating (falco-incubating_rules.yaml)
  {
    name: 'syscall.AddingSshKeysToAuthorizedKeys',
    source: 'syscall',
    rule: 'Adding ssh keys to authorized_keys',
    description: 'touch /root/.ssh/authorized_keys (an overlay on /root in a private mount namespace: written in <tmp>)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/root'], `mkdir -p /root/.ssh\n${touch('/root/.ssh/authorized_keys')}`),
  },
  {
    name: 'syscall.ChangeThreadNamespace',
    source: 'syscall',
    rule: 'Change thread namespace',
    description: 'perl calls setns(2) on its own network namespace (/proc/self/ns/net): a namespace change that changes nothing',
    unavailable: first(rawSyscalls, root('setns needs CAP_SYS_ADMIN')),
    run: () => mustRun(which('perl')!, ['-e', `open(my $ns, "<", "/proc/self/ns/net") or die "open: $!"; syscall(${nr().setns}, fileno($ns), 0) == 0 or die "setns: $!"; exit 0`]),
  },
  {
    name: 'syscall.CreateFilesBelowDev',
    source: 'syscall',
    rule: 'Create files below dev',
    description: 'touch /dev/created-by-rae-event-generator (a tmpfs on /dev in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: () => mustRun(which('unshare')!, ['--mount', 'sh', '-ec', `mount -t tmpfs rae-event-generator /dev\n${touch('/dev/created-by-rae-event-generator')}`]),
  },
  {
    name: 'syscall.DbProgramSpawnedProcess',
    source: 'syscall',
    rule: 'DB program spawned process',
    description: 'a process named mysqld (perl) runs ls',
    unavailable: needs('perl', 'ls'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'perl', 'mysqld'), ['-e', `exit(system("${which('ls')}", "${tmp}") == 0 ? 0 : 1)`]),
  },
  {
    name: 'syscall.DeleteOrRenameShellHistory',
    source: 'syscall',
    rule: 'Delete or rename shell history',
    description: 'remove a file named .bash_history in <tmp>',
    run: async ({ tmp }) => {
      const history = join(tmp, '.bash_history');
      writeFileSync(history, 'ls\n');
      rmSync(history);
    },
  },
  {
    name: 'syscall.LaunchSuspiciousNetworkToolOnHost',
    source: 'syscall',
    rule: 'Launch Suspicious Network Tool on Host',
    description: 'a process named nmap (true) with nmap -sn arguments: nothing is scanned',
    unavailable: needs('true'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'true', 'nmap'), ['-sn', `${PRIVATE_NET_ADDR}/32`]),
  },
  {
    name: 'syscall.ModifyShellConfigurationFile',
    source: 'syscall',
    rule: 'Modify Shell Configuration File',
    description: 'write a file named .bashrc in <tmp>',
    run: async ({ tmp }) => writeFileSync(join(tmp, '.bashrc'), '# written by rae event-generator\n'),
  },
  {
    name: 'syscall.NonSudoSetuid',
    source: 'syscall',
    rule: 'Non sudo setuid',
    description: 'perl (root) calls setuid(1) to become daemon, then setuid(0) to become root again (refused)',
    unavailable: first(rawSyscalls, root('to change user')),
    run: () => mustRun(which('perl')!, ['-e', `syscall(${nr().setuid}, 1) == 0 or die "setuid(1): $!"; syscall(${nr().setuid}, 0); exit 0`]),
  },
  {
    name: 'syscall.PotentialLocalPrivilegeEscalationViaEnvironmentVariablesMisuse',
    source: 'syscall',
    rule: 'Potential Local Privilege Escalation via Environment Variables Misuse',
    description: 'run true with GLIBC_TUNABLES in its environment',
    unavailable: needs('env', 'true'),
    run: () => mustRun(which('env')!, ['GLIBC_TUNABLES=glibc.malloc.mxfast=0', which('true')!]),
  },
  {
    name: 'syscall.ProgramRunWithDisallowedHttpProxyEnv',
    source: 'syscall',
    rule: 'Program run with disallowed http proxy env',
    description: 'run curl --version with HTTP_PROXY in its environment (no request is made)',
    unavailable: needs('env', 'curl'),
    run: () => mustRun(which('env')!, [`HTTP_PROXY=http://${PRIVATE_NET_ADDR}:3128`, which('curl')!, '--version']),
  },
  {
    name: 'syscall.ReadSshInformation',
    source: 'syscall',
    rule: 'Read ssh information',
    description: 'cat /root/.ssh/known_hosts (an overlay on /root in a private mount namespace; the file is made there)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/root'], 'mkdir -p /root/.ssh\n[ -e /root/.ssh/known_hosts ] || : > /root/.ssh/known_hosts\ncat /root/.ssh/known_hosts > /dev/null'),
  },
  {
    name: 'syscall.ScheduleCronJobs',
    source: 'syscall',
    rule: 'Schedule Cron Jobs',
    description: 'a process named crontab (true) runs as crontab -l',
    unavailable: needs('true'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'true', 'crontab'), ['-l']),
  },
  {
    name: 'syscall.SetSetuidorSetgidbit',
    source: 'syscall',
    rule: 'Set Setuid or Setgid bit',
    description: 'chmod u+s a file in <tmp>',
    run: async ({ tmp }) => {
      const f = join(tmp, 'setuid-file');
      writeFileSync(f, '');
      chmodSync(f, 0o4755);
    },
  },
  {
    name: 'syscall.SystemProcsNetworkActivity',
    source: 'syscall',
    rule: 'System procs network activity',
    description: `a process named sha1sum (perl) listens on, connects to and accepts on ${PRIVATE_NET_ADDR}:8080 in a private network namespace`,
    unavailable: privateNetUnavailable,
    run: ({ tmp }) => inPrivateNet([linkAs(tmp, 'perl', 'sha1sum'), '-e', perlTcpLoop(PRIVATE_NET_ADDR, 8080)]),
  },
  {
    name: 'syscall.UnexpectedUDPTraffic',
    source: 'syscall',
    rule: 'Unexpected UDP Traffic',
    description: `perl sends a UDP datagram to ${PRIVATE_NET_ADDR}:9999 in a private network namespace`,
    unavailable: privateNetUnavailable,
    run: () => inPrivateNet([which('perl')!, '-e', perlUdpSend(PRIVATE_NET_ADDR, 9999)]),
  },
  {
    name: 'syscall.UserMgmtBinaries',
    source: 'syscall',
    rule: 'User mgmt binaries',
    description: 'a process named vipw (true)',
    unavailable: needs('true'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'true', 'vipw'), []),
  },

  // ---- sandbox (falco-sandbox_rules.yaml)
  {
    // Upstream's name (events/syscall/create_hidden_file_or_directory.go), from the rule's older name.
    name: 'syscall.CreateHiddenFileOrDirectory',
    source: 'syscall',
    rule: 'Create Hidden Files or Directories',
    description: 'mkdir <tmp>/.created-by-rae-event-generator',
    run: async ({ tmp }) => mkdirSync(join(tmp, '.created-by-rae-event-generator')),
  },
  {
    name: 'syscall.DetectCryptoMinersUsingTheStratumProtocol',
    source: 'syscall',
    rule: 'Detect crypto miners using the Stratum protocol',
    description: 'run true with a stratum+tcp:// pool URL on its command line',
    unavailable: needs('true'),
    run: () => mustRun(which('true')!, ['--url', `stratum+tcp://${PRIVATE_NET_ADDR}:3333`]),
  },
  {
    name: 'syscall.DetectOutboundConnectionsToCommonMinerPoolPorts',
    source: 'syscall',
    rule: 'Detect outbound connections to common miner pool ports',
    description: "resolve a name of the rule's miner_domains list, then connect to that address on port 3333 inside a private network namespace that carries it on its loopback",
    unavailable: privateNetUnavailable,
    run: async () => {
      const address = await firstResolved(builtinList('miner_domains'));
      await inPrivateNet([which('perl')!, '-e', perlTcpLoop(address, 3333)], address);
    },
  },
  {
    name: 'syscall.InterpretedProcsInboundNetworkActivity',
    source: 'syscall',
    rule: 'Interpreted procs inbound network activity',
    description: `perl listens on and accepts a connection on ${PRIVATE_NET_ADDR}:8081 in a private network namespace`,
    unavailable: privateNetUnavailable,
    run: () => inPrivateNet([which('perl')!, '-e', perlTcpLoop(PRIVATE_NET_ADDR, 8081)]),
  },
  {
    name: 'syscall.InterpretedProcsOutboundNetworkActivity',
    source: 'syscall',
    rule: 'Interpreted procs outbound network activity',
    description: `perl connects to ${PRIVATE_NET_ADDR}:8082 in a private network namespace`,
    unavailable: privateNetUnavailable,
    run: () => inPrivateNet([which('perl')!, '-e', perlTcpLoop(PRIVATE_NET_ADDR, 8082)]),
  },
  {
    name: 'syscall.JavaProcessClassFileDownload',
    source: 'syscall',
    rule: 'Java Process Class File Download',
    description: 'java receives a datagram starting with the class file magic (CAFEBABE) over loopback',
    unavailable: needs('java'),
    run: async ({ tmp }) => {
      const src = join(tmp, 'Download.java');
      writeFileSync(
        src,
        'import java.net.*;\npublic class Download { public static void main(String[] a) throws Exception {\n' +
          '  DatagramSocket r = new DatagramSocket(0, InetAddress.getLoopbackAddress()); DatagramSocket s = new DatagramSocket();\n' +
          '  byte[] m = {(byte) 0xca, (byte) 0xfe, (byte) 0xba, (byte) 0xbe, 0, 0, 0, 52};\n' +
          '  s.send(new DatagramPacket(m, m.length, r.getLocalSocketAddress())); r.receive(new DatagramPacket(new byte[64], 64)); } }\n',
      );
      await mustRun(which('java')!, [src], { timeoutMs: 60_000 });
    },
  },
  {
    name: 'syscall.MkdirBinaryDirs',
    source: 'syscall',
    rule: 'Mkdir binary dirs',
    description: 'mkdir /usr/bin/rae-event-generator (an overlay on /usr/bin in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/usr/bin'], 'mkdir /usr/bin/rae-event-generator'),
  },
  {
    name: 'syscall.ModifyBinaryDirs',
    source: 'syscall',
    rule: 'Modify binary dirs',
    description: 'mv /usr/bin/true /usr/bin/true.rae-event-generator (an overlay on /usr/bin in a private mount namespace)',
    unavailable: first(overlayUnavailable, needs('true', 'mv')),
    run: ({ tmp }) => inOverlay(tmp, ['/usr/bin'], 'mv /usr/bin/true /usr/bin/true.rae-event-generator'),
  },
  {
    name: 'syscall.PolkitLocalPrivilegeEscalationVulnerabilityCVE20214034',
    source: 'syscall',
    rule: 'Polkit Local Privilege Escalation Vulnerability (CVE-2021-4034)',
    description: 'a process named pkexec (true) run without arguments',
    unavailable: needs('true'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'true', 'pkexec'), []),
  },
  {
    name: 'syscall.ReadShellConfigurationFile',
    source: 'syscall',
    rule: 'Read Shell Configuration File',
    description: 'cat a file named .bashrc in <tmp>',
    unavailable: needs('cat'),
    run: async ({ tmp }) => {
      const rc = join(tmp, '.bashrc');
      writeFileSync(rc, '');
      await mustRun(which('cat')!, [rc]);
    },
  },
  {
    name: 'syscall.SudoPotentialPrivilegeEscalation',
    source: 'syscall',
    rule: 'Sudo Potential Privilege Escalation',
    description: 'a process named sudoedit (true) run as sudoedit -s \\ (the CVE-2021-3156 argument shape)',
    unavailable: needs('true'),
    run: ({ tmp }) => mustRun(linkAs(tmp, 'true', 'sudoedit'), ['-s', '\\']),
  },
  {
    name: 'syscall.UnprivilegedDelegationOfPageFaultsHandlingToAUserspaceProcess',
    source: 'syscall',
    rule: 'Unprivileged Delegation of Page Faults Handling to a Userspace Process',
    description: 'perl as nobody opens a userfaultfd (UFFD_USER_MODE_ONLY, allowed unprivileged) and closes it',
    unavailable: first(rawSyscalls, nobodyUnavailable),
    // O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY (linux/userfaultfd.h)
    run: () => {
      const [file, ...args] = asNobody([which('perl')!, '-e', `syscall(${nr().userfaultfd}, 0x80801) >= 0 or die "userfaultfd: $!"; exit 0`]);
      return mustRun(file!, args);
    },
  },
  {
    name: 'syscall.UpdatePackageRepository',
    source: 'syscall',
    rule: 'Update Package Repository',
    description: 'touch /etc/apt/sources.list.d/rae-event-generator.list (an overlay on /etc in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/etc'], `mkdir -p /etc/apt/sources.list.d\n${touch('/etc/apt/sources.list.d/rae-event-generator.list')}`),
  },
  {
    name: 'syscall.WriteBelowBinaryDir',
    source: 'syscall',
    rule: 'Write below binary dir',
    description: 'touch /usr/bin/created-by-rae-event-generator (an overlay on /usr/bin in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/usr/bin'], touch('/usr/bin/created-by-rae-event-generator')),
  },
  {
    name: 'syscall.WriteBelowEtc',
    source: 'syscall',
    rule: 'Write below etc',
    description: 'touch /etc/created-by-rae-event-generator (an overlay on /etc in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/etc'], touch('/etc/created-by-rae-event-generator')),
  },
  {
    name: 'syscall.WriteBelowMonitoredDir',
    source: 'syscall',
    rule: 'Write below monitored dir',
    description: 'touch created-by-rae-event-generator in /boot (else /usr/local/bin, /usr/lib; an overlay on it in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => {
      const dir = ['/boot', '/usr/local/bin', '/usr/lib'].find((d) => existsSync(d))!;
      return inOverlay(tmp, [dir], touch(`${dir}/created-by-rae-event-generator`));
    },
  },
  {
    name: 'syscall.WriteBelowRpmDatabase',
    source: 'syscall',
    rule: 'Write below rpm database',
    description: 'touch /var/lib/rpm/created-by-rae-event-generator (an overlay on /var/lib in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/var/lib'], `mkdir -p /var/lib/rpm\n${touch('/var/lib/rpm/created-by-rae-event-generator')}`),
  },
  {
    name: 'syscall.WriteBelowRoot',
    source: 'syscall',
    rule: 'Write below root',
    description: 'touch /root/created-by-rae-event-generator (an overlay on /root in a private mount namespace)',
    unavailable: overlayUnavailable,
    run: ({ tmp }) => inOverlay(tmp, ['/root'], touch('/root/created-by-rae-event-generator')),
  },
];
