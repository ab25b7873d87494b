/** What /proc says of this host's processes lives in src/host/procfs.ts, below every layer that asks. */
export * from '../host/procfs';
