/**
 * What this build is, as the API (GET /healthz `version`), the CLI (`od-worktree --version`) and
 * the exported clients advertise it. No imports: the CLI's --version path loads nothing else.
 */

/** The package's version; test/integration/package.test.ts keeps it equal to package.json's. */
export const PACKAGE_VERSION = '0.1.0';

/**
 * The wire contract's version, MAJOR.MINOR: HTTP request and response bodies, events, reason
 * codes (the schemas of `worktree-ownership/schemas`). MAJOR is the `/v1` of the routes and
 * changes only with a breaking change; MINOR counts additive ones.
 * docs/integrating.md#versioning-of-the-wire-schemas says which is which.
 */
export const WIRE_VERSION = '1.16';

/** MAJOR of WIRE_VERSION: a client and a service talk when these are equal. */
export const WIRE_MAJOR = Number(WIRE_VERSION.split('.')[0]);

export interface VersionInfo {
  package: string;
  wire: string;
}

export const VERSION_INFO: Readonly<VersionInfo> = Object.freeze({ package: PACKAGE_VERSION, wire: WIRE_VERSION });
