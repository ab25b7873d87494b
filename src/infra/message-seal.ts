/** The service keyring and message seals live in src/keys/message-seal.ts, below every layer that seals or checks. */
export * from '../keys/message-seal';
