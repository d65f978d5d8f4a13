# simarena in a container: the compiled server on port 3000, the SQLite database on the volume /var/lib/simarena.
#   docker build -t simarena .
#   docker run -d --name simarena -p 127.0.0.1:3000:3000 -v simarena-data:/var/lib/simarena \
#     -e PUBLIC_URL=https://arena.example.org -e TRUST_PROXY=1 simarena
# See docs/operator/deploying.md. BASE_IMAGE: any Debian 12 image with Node 20 (node and npm on the PATH) and a `node`
# user; scripts/deploy/container-check.sh builds one locally where no registry can be reached.
ARG BASE_IMAGE=node:20-bookworm-slim

# Stage 1: every dependency (better-sqlite3 compiles when no prebuilt binary can be downloaded), the build, then the
# development dependencies removed again.
FROM ${BASE_IMAGE} AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts/deploy/build.mjs ./scripts/deploy/build.mjs
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Stage 2: the runtime, compiled code only, without compilers or development dependencies, as the unprivileged `node` user.
FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/var/lib/simarena/simarena.db
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json ./
COPY bin ./bin
COPY views ./views
COPY public ./public
COPY data/scenarios ./data/scenarios
COPY data/demo ./data/demo
RUN mkdir -p /var/lib/simarena && chown node:node /var/lib/simarena
USER node
VOLUME ["/var/lib/simarena"]
EXPOSE 3000
# /healthz answers 503 when the database cannot be written (read-only volume, full disk).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and receives SIGTERM from `docker stop`: the server finishes open requests, pauses generation runs
# and closes the database (src/server.ts).
# The server's heap as `npm start` sets it: a 16 MB young and a 160 MB old generation, and one V8 helper thread; raise
# the second on a larger machine. The analysis worker it forks runs without these limits.
CMD ["node", "--enable-source-maps", "--max-semi-space-size=16", "--max-old-space-size=160", "--v8-pool-size=1", "dist/server.js"]
