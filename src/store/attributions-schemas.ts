/** The attribution answers are wire schemas (src/contract/attributions.ts); the store fills them. */
export * from '../contract/attributions';
