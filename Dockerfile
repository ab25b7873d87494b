# syntax=docker/dockerfile:1
#
# Image of the worktree ownership service. One image, three commands, all compiled JavaScript
# (`npm run build` in the build stage; no TypeScript and no tsx in the image):
#   node dist/worker.js                 Temporal worker (default; --host-agent for a host agent)
#   node dist/src/server/main.js           HTTP API + MCP endpoint
#   node dist/scripts/migrate.js        PostgreSQL migrations (one-shot)
# and the CLI, bin/od-worktree.js (runs dist/: the image holds no src/).
# docker-compose.yml sets the command per service; test/unit/compose.test.ts checks that the
# sources of the files named here exist and are not excluded by .dockerignore.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- npm: npm 11 for the two install stages -------------------------------------------------------
FROM ${NODE_IMAGE} AS npm
# package.json's `allowScripts` policy (which install scripts may run) needs npm 11; the node:20
# images ship npm 10. Pinned to the npm the lockfile was written with.
ARG NPM_VERSION=11.19.1
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
RUN npm install -g "npm@${NPM_VERSION}" && npm --version
WORKDIR /app
COPY package.json package-lock.json ./

# ---- deps: production node_modules ---------------------------------------------------------------
FROM npm AS deps
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev

# ---- build: dist/ (tsc and the workflow bundle, scripts/build.js; needs the dev dependencies) -----
FROM npm AS build
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci
COPY tsconfig.json tsconfig.build.json worker.ts ./
COPY scripts/build.js scripts/migrate.ts ./scripts/
COPY src ./src
COPY migrations ./migrations
COPY hooks ./hooks
RUN npm run build

# ---- runtime -----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="worktree-ownership" \
      org.opencontainers.image.description="Durable ownership of git worktrees by AI-agent sessions: Temporal workflows, a PostgreSQL event log and a git-side projection."
# - git: the git activities (worktree config projection, lock files, WIP refs);
#   tini: PID 1 that forwards signals and reaps the git child processes.
# - The runtime calls node directly: the package managers go (smaller, fewer CVEs).
# - System git identity for commit objects the service writes itself (WIP preservation) when
#   nothing more specific is configured; works for any uid, also one without a passwd entry
#   (compose `user:`).
# - A fixed non-root uid/gid 10001.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && git config --system user.name "worktree-ownership" \
 && git config --system user.email "worktree-ownership@localhost" \
 && groupadd --system --gid 10001 od \
 && useradd --system --uid 10001 --gid od --home-dir /home/od --create-home --shell /usr/sbin/nologin od

WORKDIR /app
ENV NODE_ENV=production
# Production dependencies first (change rarely), then the compiled code (dist/ holds the
# migrations and hook scripts it reads) and the CLI. All root-owned: the service cannot modify
# its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist

USER 10001:10001
EXPOSE 8787
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/worker.js"]
