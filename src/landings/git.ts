/** The git questions landing inference asks live with the rest of git (src/git/repo-git.ts). */
export * from '../git/repo-git';
