/** od-worktree's --json output schemas are the contract's (src/contract/cli-output.ts). */
export * from '../../contract/cli-output';
