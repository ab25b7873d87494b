import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Real network hosts on one machine: one Linux network namespace per host, each joined by a veth
 * pair to a bridge in the root namespace, where the shared services (Temporal, PostgreSQL) listen
 * on the bridge's address. A host is cut off by taking its link down: its processes keep running,
 * its packets go nowhere, exactly as when a cable or a VPN drops. Needs root and `ip` (iproute2).
 */

export interface NetHost {
  /** the host's name in the run (h1, h2, …) */
  name: string;
  /** its network namespace */
  ns: string;
  /** its address on the bridge */
  ip: string;
  /** the root-namespace end of its veth pair: down = cut off */
  link: string;
}

export interface Network {
  /** the bridge's address: where Temporal and PostgreSQL listen */
  hubIp: string;
  hosts: NetHost[];
  /** takes the host's link down (its sockets stay open, nothing gets through) */
  cut(host: NetHost): void;
  heal(host: NetHost): void;
  isCut(host: NetHost): boolean;
  /** removes the namespaces, links and bridge; safe to call twice */
  destroy(): void;
}

const IP_CANDIDATES = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];

export function ipBinary(): string | null {
  return IP_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/**
 * Why network hosts cannot be made here, or null when they can: root, `ip`, and a namespace that
 * can really be created (a container without CAP_SYS_ADMIN or CAP_NET_ADMIN cannot).
 */
export function whyNoNetns(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root (network namespaces need root)';
  const ip = ipBinary();
  if (!ip) return 'no `ip` binary (iproute2)';
  const probe = `odprobe${process.pid % 100000}`;
  const add = spawnSync(ip, ['netns', 'add', probe], { encoding: 'utf8' });
  if (add.status !== 0) return `\`ip netns add\` failed: ${(add.stderr || add.error?.message || '').trim()}`;
  spawnSync(ip, ['netns', 'del', probe]);
  const br = spawnSync(ip, ['link', 'add', `${probe}b`, 'type', 'bridge'], { encoding: 'utf8' });
  if (br.status !== 0) return `cannot create a bridge: ${(br.stderr || '').trim()}`;
  spawnSync(ip, ['link', 'del', `${probe}b`]);
  return null;
}

/**
 * `count` hosts on 10.<octet>.0.0/24: the bridge is .1, host i is .(10 + i). Names carry `tag`
 * (at most 4 characters: interface names are limited to 15) so that runs side by side never meet.
 */
export function createNetwork(tag: string, count: number, octet = 77): Network {
  const ip = ipBinary();
  if (!ip) throw new Error('no `ip` binary');
  const run = (...args: string[]) => execFileSync(ip, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const quiet = (...args: string[]) => spawnSync(ip, args, { stdio: 'ignore' });
  const bridge = `odbr${tag}`;
  const hubIp = `10.${octet}.0.1`;
  const hosts: NetHost[] = Array.from({ length: count }, (_, i) => ({
    name: `h${i + 1}`,
    ns: `od${tag}h${i + 1}`,
    ip: `10.${octet}.0.${11 + i}`,
    link: `od${tag}h${i + 1}r`,
  }));
  const cut = new Set<string>();
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const h of hosts) {
      quiet('netns', 'del', h.ns);
      quiet('link', 'del', h.link);
    }
    quiet('link', 'del', bridge);
  };
  try {
    run('link', 'add', bridge, 'type', 'bridge');
    run('addr', 'add', `${hubIp}/24`, 'dev', bridge);
    run('link', 'set', bridge, 'up');
    for (const h of hosts) {
      const inner = `od${tag}h${h.name.slice(1)}n`;
      run('netns', 'add', h.ns);
      run('link', 'add', h.link, 'type', 'veth', 'peer', 'name', inner);
      run('link', 'set', inner, 'netns', h.ns);
      run('link', 'set', h.link, 'master', bridge, 'up');
      run('-n', h.ns, 'addr', 'add', `${h.ip}/24`, 'dev', inner);
      run('-n', h.ns, 'link', 'set', inner, 'up');
      run('-n', h.ns, 'link', 'set', 'lo', 'up');
    }
  } catch (err) {
    destroy();
    throw err;
  }
  return {
    hubIp,
    hosts,
    cut(h) {
      run('link', 'set', h.link, 'down');
      cut.add(h.name);
    },
    heal(h) {
      run('link', 'set', h.link, 'up');
      cut.delete(h.name);
    },
    isCut: (h) => cut.has(h.name),
    destroy,
  };
}

/** The command line that runs `argv` inside the host's namespace. */
export function inHost(h: NetHost, argv: string[]): { command: string; args: string[] } {
  return { command: ipBinary()!, args: ['netns', 'exec', h.ns, ...argv] };
}
