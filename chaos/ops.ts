/** The API's operations a chaos run sends, by the name its call records give them. */
export type OpName = 'bind' | 'heartbeat' | 'plan' | 'handoff' | 'accept' | 'cancel' | 'release' | 'reclaim' | 'submit' | 'landed' | 'worktreeRemoved' | 'get';
