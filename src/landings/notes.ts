/** A landed head's provenance as a git note is written beside the provenance it reads (src/store/provenance-notes.ts). */
export * from '../store/provenance-notes';
