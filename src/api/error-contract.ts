/** The error body and each reason's HTTP status are the contract's (src/contract/errors.ts). */
export * from '../contract/errors';
