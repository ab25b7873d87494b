// The ownerships suites (groups.ts says which and why they share a file).
import { runGroup } from './groups';

runGroup(__filename);
