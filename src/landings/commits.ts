/** The landed commits of a receipt are rows of the store (src/store/landing-commits.ts). */
export * from '../store/landing-commits';
