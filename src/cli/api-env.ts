import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiClient, DEFAULT_API_URL, normalizeApiUrl } from '../api/client';

/**
 * Where every od-worktree command finds the ownership service and its credentials: OD_API_URL
 * (default: where `npm start` serves it; a bare host:port means http://) and the bearer token
 * OD_TOKEN. The one place both are read, so that a command that writes cannot pick up
 * credentials any other way. An OD_API_URL that is no URL throws ApiUrlError (a usage error).
 */
export interface ApiEnv {
  baseUrl: string;
  token: string | undefined;
}

export function apiEnv(env: NodeJS.ProcessEnv = process.env): ApiEnv {
  return { baseUrl: env.OD_API_URL ? normalizeApiUrl(env.OD_API_URL) : DEFAULT_API_URL, token: env.OD_TOKEN || undefined };
}

export function apiClient(e: ApiEnv = apiEnv()): ApiClient {
  return new ApiClient({ baseUrl: e.baseUrl, ...(e.token ? { token: e.token } : {}) });
}

/** The checkout (or installed package) this CLI runs from: the nearest directory up with our package.json. */
function packageRoot(): string | null {
  for (let dir = __dirname, i = 0; i < 5; i++, dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    try {
      if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'worktree-ownership') return dir;
    } catch {
      /* not ours */
    }
  }
  return null;
}

/**
 * Where `npm start` keeps the clear dev tokens it generates: <OD_DATA_DIR>/dev-principals.json.secret.json,
 * OD_DATA_DIR defaulting to `.data` in the checkout `npm start` ran in.
 */
export function devTokensFile(env: NodeJS.ProcessEnv = process.env): string {
  const dataDir = env.OD_DATA_DIR ? path.resolve(env.OD_DATA_DIR) : path.join(packageRoot() ?? process.cwd(), '.data');
  return path.join(dataDir, 'dev-principals.json.secret.json');
}
