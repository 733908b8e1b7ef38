# knh image on Node 24 (an LTS line; package.json's engines admits it, and CI runs the tests on it:
# .ci/run reads the version from here). Built with dev dependencies; it ships what the npm package
# ships (package.json's `files`): the bundled program, its schemas and the licences of the code it
# bundles. No node_modules: the bundles hold every library knh runs.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json LICENSE README.md ./
COPY src ./src
COPY scripts ./scripts
COPY schemas ./schemas
# The git revision the program names (knh_build_info, GET /status, its User-Agent): there is no
# .git here, so the build is told it (docker build --build-arg KNH_REVISION=$(git rev-parse --short
# HEAD); docs/development.md, "Cutting a release"). Left unset, the revision is `unknown`.
ARG KNH_REVISION
# The version the image's labels name (below), checked against the package's: a label that says
# another version than the program it holds stops the build.
ARG KNH_VERSION
RUN test -z "$KNH_VERSION" || test "$KNH_VERSION" = "$(node -p 'require("./package.json").version')" \
  || { echo "KNH_VERSION=$KNH_VERSION is not package.json's version" >&2; exit 1; }
# The package, packed (its prepack is the build: tsc, then the bundles, scripts/bundle.ts) and
# unpacked into /package.
RUN npm pack --pack-destination /tmp \
  && mkdir /package && tar -xzf /tmp/knh-*.tgz -C /package --strip-components=1

FROM node:24-bookworm-slim
# What the image is, as OCI's annotations say it (docker inspect, registries): the version and
# revision are the build arguments above, `unknown` when not given.
ARG KNH_VERSION=unknown
ARG KNH_REVISION=unknown
LABEL org.opencontainers.image.title="knh" \
  org.opencontainers.image.description="Kubernetes networking health checker: a bully-elected coordinator probes every node's pod network and posts webhooks" \
  org.opencontainers.image.licenses="MIT" \
  org.opencontainers.image.version="$KNH_VERSION" \
  org.opencontainers.image.revision="$KNH_REVISION"
ENV NODE_ENV=production
# One malloc arena rather than one for each of V8's and libuv's threads: 3-4 MB less a pod, for no
# CPU measured, even in the coordinator of 5,000 peers (docs/benchmarks.md, "The floor").
ENV MALLOC_ARENA_MAX=1
WORKDIR /app
COPY --from=build /package ./
# The base image's unprivileged `node` user, by number so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "/app/dist/knh.cjs"]
