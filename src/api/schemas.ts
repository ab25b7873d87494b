/** The HTTP API's wire schemas are the contract's (src/contract/http.ts). */
export * from '../contract/http';
