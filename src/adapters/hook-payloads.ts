import { z } from 'zod';

/**
 * The JSON each agent tool sends its hooks on stdin, as the tools document it (Claude Code:
 * code.claude.com/docs/en/hooks; Codex: developers.openai.com/codex/hooks), with only the fields
 * the adapters read checked. Objects are loose: both tools add fields between releases
 * (permission_mode, model, turn_id, agent_id), and a hook that refused an unknown field would
 * break every session on the day the tool grew one. test/fixtures/adapters/ holds one recorded
 * payload per event, written from those documented shapes.
 */

export const TOOLS = ['claude-code', 'codex'] as const;
export type Tool = (typeof TOOLS)[number];

const Common = {
  session_id: z.string().min(1).max(200),
  transcript_path: z.string().nullable().optional(),
  cwd: z.string().min(1),
  hook_event_name: z.string(),
};

export const SessionStartSchema = z.looseObject({
  ...Common,
  hook_event_name: z.literal('SessionStart'),
  /** startup | resume | clear | compact (Codex: startup | resume | clear) */
  source: z.string().optional(),
});
export type SessionStartPayload = z.infer<typeof SessionStartSchema>;

/** Claude Code only: the session ends (clear, logout, prompt_input_exit, other). Cannot block. */
export const SessionEndSchema = z.looseObject({ ...Common, hook_event_name: z.literal('SessionEnd'), reason: z.string().optional() });
export type SessionEndPayload = z.infer<typeof SessionEndSchema>;

/** Both tools: before a tool call. Exit 2 with a reason on stderr blocks it. */
export const PreToolUseSchema = z.looseObject({
  ...Common,
  hook_event_name: z.literal('PreToolUse'),
  tool_name: z.string(),
  tool_input: z.unknown(),
});
export type PreToolUsePayload = z.infer<typeof PreToolUseSchema>;

/**
 * Claude Code only: replaces its own `git worktree add` for `--worktree` and subagents with
 * `isolation: "worktree"`. The hook creates the worktree and prints its absolute path on stdout;
 * any other exit fails the creation. The reference names the field `name`; some builds were seen
 * sending `worktree_name`: either is read.
 */
export const WorktreeCreateSchema = z
  .looseObject({
    ...Common,
    hook_event_name: z.literal('WorktreeCreate'),
    name: z.string().min(1).max(200).optional(),
    worktree_name: z.string().min(1).max(200).optional(),
  })
  .refine((p) => p.name !== undefined || p.worktree_name !== undefined, { message: 'no worktree name (name)' });
export type WorktreeCreatePayload = z.infer<typeof WorktreeCreateSchema>;

/** Claude Code only: replaces its own removal of a worktree it created. Cannot block; the hook does the removal or does not. */
export const WorktreeRemoveSchema = z.looseObject({ ...Common, hook_event_name: z.literal('WorktreeRemove'), worktree_path: z.string().min(1) });
export type WorktreeRemovePayload = z.infer<typeof WorktreeRemoveSchema>;

/** Codex only: a turn ends (it is not the session's end: Codex has no such event). */
export const StopSchema = z.looseObject({ ...Common, hook_event_name: z.literal('Stop'), stop_hook_active: z.boolean().optional() });
export type StopPayload = z.infer<typeof StopSchema>;

/** The events each adapter installs, by the name of its `od-worktree hook <tool> <event>` subcommand. */
export const EVENTS = {
  'claude-code': {
    'session-start': { hookEvent: 'SessionStart', schema: SessionStartSchema },
    'session-end': { hookEvent: 'SessionEnd', schema: SessionEndSchema },
    'pre-tool-use': { hookEvent: 'PreToolUse', schema: PreToolUseSchema },
    'worktree-create': { hookEvent: 'WorktreeCreate', schema: WorktreeCreateSchema },
    'worktree-remove': { hookEvent: 'WorktreeRemove', schema: WorktreeRemoveSchema },
  },
  codex: {
    'session-start': { hookEvent: 'SessionStart', schema: SessionStartSchema },
    'pre-tool-use': { hookEvent: 'PreToolUse', schema: PreToolUseSchema },
    stop: { hookEvent: 'Stop', schema: StopSchema },
  },
} as const;
export type EventName<T extends Tool> = keyof (typeof EVENTS)[T];
