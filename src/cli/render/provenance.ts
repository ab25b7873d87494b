import { provenanceFields, type Provenance } from '../../provenance/provenance';
import { renderFields } from './format';

/**
 * `od-worktree provenance <commit>`: landed commit -> source branch/worktree -> session -> worker ->
 * conversation (docs/operations.md, Landing and provenance). The rows are the store's own (provenanceFields), so the CLI and
 * any other renderer agree; missing links read `unknown`.
 */
export function renderProvenance(p: Provenance): string {
  return renderFields(provenanceFields(p));
}
