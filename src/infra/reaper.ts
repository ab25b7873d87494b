import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The last line of defence against leftovers: a tiny `sh` in its own process group, holding a
 * pipe from this process. `npm start` tells it every child it spawns; when the pipe closes
 * without a `done` (this process was SIGKILLed, e.g. by a supervisor's escalation, or crashed
 * past every handler), it signals each child that is still there and, a few seconds later,
 * kills what is left. An ordered shutdown ends with `done`, and the reaper exits doing nothing.
 *
 * Protocol, one line each: `add <pid> <signal> <group|pid>`, `del <pid>`, `done`.
 */
const SCRIPT = `
set -u
entries=""
while IFS=' ' read -r op pid sig scope; do
  case "$op" in
    add) entries="$entries $pid:$sig:$scope" ;;
    del) kept=""; for e in $entries; do [ "\${e%%:*}" = "$pid" ] || kept="$kept $e"; done; entries=$kept ;;
    done) exit 0 ;;
  esac
done
signal_all() {
  for e in $entries; do
    pid=\${e%%:*}; rest=\${e#*:}; sig=\${rest%%:*}; scope=\${rest#*:}
    [ -n "$1" ] && sig=$1
    if [ "$scope" = group ]; then kill -s "$sig" -- "-$pid" 2>/dev/null; else kill -s "$sig" "$pid" 2>/dev/null; fi
  done
}
signal_all ""
i=0
while [ $i -lt 50 ]; do
  alive=0
  for e in $entries; do kill -0 "\${e%%:*}" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && exit 0
  sleep 0.1
  i=$((i + 1))
done
signal_all KILL
exit 0
`;

export interface Reaper {
  /** `group`: signal the whole process group the child leads (it was spawned detached). */
  add(pid: number, signal: 'TERM' | 'INT', scope: 'group' | 'pid'): void;
  del(pid: number): void;
  /** Everything was stopped in order: the reaper exits without touching anything. */
  done(): void;
}

export function startReaper(): Reaper {
  let child: ChildProcess | null = null;
  try {
    child = spawn('sh', ['-c', SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => (child = null));
    child.stdin?.on('error', () => undefined);
    // Neither the reaper nor its pipe may keep this process alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  } catch {
    child = null;
  }
  const send = (line: string) => {
    if (child?.stdin?.writable) child.stdin.write(`${line}\n`);
  };
  return {
    add: (pid, signal, scope) => send(`add ${pid} ${signal} ${scope}`),
    del: (pid) => send(`del ${pid}`),
    done: () => {
      send('done');
      child?.stdin?.end();
    },
  };
}
