import { realpathSync } from 'node:fs';
import path from 'node:path';
import { portHolder, type PortHolder } from '../host/procfs';
import { PROJECT_ROOT } from './tools';

export interface HolderContext {
  /** OD_DATA_DIR of this start: a dev server or PostgreSQL with its data here is ours */
  dataDir?: string;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

const within = (p: string, dir: string) => p === dir || p.startsWith(`${dir}${path.sep}`);

function argAfter(cmd: readonly string[], flag: string): string | null {
  const i = cmd.indexOf(flag);
  return i >= 0 && i + 1 < cmd.length ? cmd[i + 1]! : null;
}

/** `kill -- -<pgid>` when the process leads its own group (the dev server does): its children go too. */
function stopCommand(h: PortHolder, signal: 'TERM' | 'INT'): string {
  const sig = signal === 'TERM' ? '' : `-${signal} `;
  return h.pgrp === h.pid ? `kill ${sig}-- -${h.pid}` : `kill ${sig}${h.pid}`;
}

/**
 * Who holds `port`, in words a person can act on, or null when it cannot be seen (another
 * user's process without root, or no /proc). A leftover of an earlier start of this project is
 * said to be one, with the command that stops it: moving the port would leave it running.
 */
export function describePortHolder(port: number, ctx: HolderContext = {}): string | null {
  const h = portHolder(port);
  if (!h) return null;
  const cmd = h.command;
  const exe = cmd[0] ?? '';
  const dataDir = ctx.dataDir ? real(ctx.dataDir) : null;

  if (cmd.includes('start-dev') && cmd.includes('server')) {
    const db = argAfter(cmd, '--db-filename');
    const ours = (db !== null && dataDir !== null && within(real(db), dataDir)) || within(real(exe), real(path.join(PROJECT_ROOT, '.tools')));
    const what = ours ? 'a Temporal dev server left running by an earlier `npm start`' : 'a Temporal dev server';
    return `${what} (pid ${h.pid}${db ? `, data ${db}` : ''}): stop it with \`${stopCommand(h, 'TERM')}\``;
  }
  if (path.basename(exe) === 'postgres' && cmd.includes('-D')) {
    const data = argAfter(cmd, '-D');
    const ours = data !== null && dataDir !== null && (within(real(data), dataDir) || within(real(data), real(path.join(dataDir, 'pg'))));
    const what = ours ? 'an embedded PostgreSQL left running by an earlier `npm start`' : 'a PostgreSQL server';
    return `${what} (pid ${h.pid}${data ? `, data ${data}` : ''}): stop it with \`${stopCommand(h, 'INT')}\``;
  }
  if (cmd.some((a) => a.endsWith(`scripts${path.sep}start.ts`))) {
    return `another \`npm start\` (pid ${h.pid}): stop it with Ctrl-C in its terminal or \`kill -INT ${h.pid}\``;
  }
  const shown = cmd.join(' ').slice(0, 120);
  return `pid ${h.pid}${shown ? ` (${shown})` : ''}`;
}
