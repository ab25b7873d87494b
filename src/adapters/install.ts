import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../git/atomic';
import { EVENTS, type Tool } from './hook-payloads';

/**
 * `od-worktree integrate <tool>`: the tool's own hook configuration, pointing each event at
 * `od-worktree hook <tool> <event>`, merged into whatever the file already holds. Both tools
 * document one shape (Claude Code's .claude/settings.json `hooks`, Codex's .codex/hooks.json):
 * event -> [ { matcher?, hooks: [ { type: "command", command, timeout? } ] } ].
 * Ours are recognised by their command (`… hook <tool> <event>`), so installing again replaces
 * them in place and leaves every other hook, and every other setting, as it was.
 */

const HookSchema = z.looseObject({ type: z.string(), command: z.string().optional() });
const GroupSchema = z.looseObject({ matcher: z.string().optional(), hooks: z.array(HookSchema) });
/** The file as the tool reads it; anything beside `hooks` is the user's and passes through untouched. */
export const HookSettingsSchema = z.looseObject({ hooks: z.record(z.string(), z.array(GroupSchema)).optional() });
export type HookSettings = z.infer<typeof HookSettingsSchema>;
type Group = z.infer<typeof GroupSchema>;

/** Which events match which tool calls or sources: the documented matcher values. */
const MATCHERS: Record<Tool, Partial<Record<string, string>>> = {
  'claude-code': { 'session-start': 'startup|resume|clear|compact', 'pre-tool-use': 'Bash' },
  codex: { 'session-start': 'startup|resume|clear', 'pre-tool-use': 'Bash' },
};

/** Seconds: a bind or a lossless removal goes through the service and the worktree's host (at most 50 s). */
const TIMEOUTS: Partial<Record<string, number>> = { 'worktree-create': 90, 'worktree-remove': 90, 'session-end': 60 };

const shQuote = (s: string): string => (/^[A-Za-z0-9_./:@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** How the installed hooks run this CLI: the node and the bin file of this installation, by absolute path (hooks run with the tool's PATH). */
export function cliCommand(node: string = process.execPath, bin: string = binPath()): string {
  return `${shQuote(node)} ${shQuote(bin)}`;
}

function binPath(): string {
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'bin', 'od-worktree.js');
    if (existsSync(candidate)) return candidate;
  }
  return 'od-worktree';
}

const OURS = /(^|[\s/'])od-worktree(\.js)?'?\s+hook\s+(claude-code|codex)\s+[a-z-]+\s*$/;

/** A hook entry this command installed (whatever install of the CLI it points at). */
export function isOurs(h: { command?: string | undefined }): boolean {
  return typeof h.command === 'string' && OURS.test(h.command);
}

/** The hooks object `integrate <tool>` installs, for a CLI run as `cli`. */
export function hookConfig(tool: Tool, cli: string = cliCommand()): Record<string, Group[]> {
  const out: Record<string, Group[]> = {};
  for (const [event, { hookEvent }] of Object.entries(EVENTS[tool])) {
    const matcher = MATCHERS[tool][event];
    const timeout = TIMEOUTS[event];
    const hook = { type: 'command', command: `${cli} hook ${tool} ${event}`, ...(timeout ? { timeout } : {}) };
    (out[hookEvent] ??= []).push({ ...(matcher ? { matcher } : {}), hooks: [hook] });
  }
  return out;
}

/**
 * `existing` with our hooks replaced by `ours`: each of our entries removed wherever it sits
 * (a group left empty by that removal is dropped, other groups keep their order), then ours
 * appended per event. Applying it twice gives the same document.
 */
export function mergeHooks(existing: HookSettings, ours: Record<string, Group[]>): HookSettings {
  const hooks: Record<string, Group[]> = {};
  for (const [event, groups] of Object.entries(existing.hooks ?? {})) {
    const kept = groups.flatMap((g) => {
      const left = g.hooks.filter((h) => !isOurs(h));
      return left.length === g.hooks.length ? [g] : left.length > 0 ? [{ ...g, hooks: left }] : [];
    });
    if (kept.length > 0) hooks[event] = kept;
  }
  for (const [event, groups] of Object.entries(ours)) hooks[event] = [...(hooks[event] ?? []), ...groups];
  return { ...existing, hooks };
}

export function render(settings: HookSettings): string {
  return `${JSON.stringify(settings, null, 2)}\n`;
}

/** Where each tool reads hooks: the repository's own file, or with `user` the user's. */
export function defaultConfigFile(tool: Tool, repoTop: string, home: string, user: boolean): string {
  const dir = tool === 'claude-code' ? '.claude' : '.codex';
  const file = tool === 'claude-code' ? 'settings.json' : 'hooks.json';
  return path.join(user ? home : repoTop, dir, file);
}

export class SettingsUnreadable extends Error {}

async function readSettings(file: string): Promise<HookSettings> {
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  let json: unknown;
  try {
    json = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    // Never overwritten: the user's file is theirs to fix, and a guess would lose their settings.
    throw new SettingsUnreadable(`${file} is not JSON: fix it by hand, or pass --print and merge the hooks yourself`);
  }
  const parsed = HookSettingsSchema.safeParse(json);
  if (!parsed.success) throw new SettingsUnreadable(`${file}: its "hooks" are not in the documented shape (event -> [{ matcher?, hooks: [...] }])`);
  return parsed.data;
}

export interface InstallResult {
  file: string;
  changed: boolean;
  text: string;
}

/** Merges our hooks into `file` (created with its directory when missing), atomically; `print` only answers the text. */
export async function installHooks(tool: Tool, file: string, o: { print: boolean; cli?: string }): Promise<InstallResult> {
  const before = await readSettings(file);
  const text = render(mergeHooks(before, hookConfig(tool, o.cli)));
  const current = await fs.readFile(file, 'utf8').catch(() => null);
  const changed = current !== text;
  if (!o.print && changed) {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const mode = await fs.stat(file).then(
      (s) => s.mode & 0o777,
      () => 0o644,
    );
    await writeFileAtomic(file, text, mode);
  }
  return { file, changed, text };
}
