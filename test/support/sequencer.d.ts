/** The plan of test/support/sequencer.js (plain JavaScript: jest loads a sequencer untransformed). */
export function plan<T>(items: T[], workers: number, ms: (t: T) => number, heavy: (t: T) => boolean): T[];
