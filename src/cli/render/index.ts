export { renderHistory, renderHistoryEntry } from './history';
export { LIST_COLUMNS, listRow, renderOwnersTable, shortPath } from './list';
export { renderProvenance } from './provenance';
export { renderWho, whoFields } from './who';
export { renderFields, runtimeLabel, show, UNKNOWN, type Field } from './format';
