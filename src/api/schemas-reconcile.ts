/** The reconciliation wire schemas are the contract's (src/contract/reconcile.ts). */
export * from '../contract/reconcile';
