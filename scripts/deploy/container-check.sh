#!/usr/bin/env bash
# Builds the Dockerfile with podman and runs the image as a deployment would: /healthz answers, a rater walks the demo
# batch to its completion code, SIGTERM stops the server cleanly, a restart on the same volume keeps every judgment, and
# the server runs as a non-root user. Run as root on a Debian 12 machine with podman, runc and debootstrap
# (apt-get install podman runc debootstrap) and Node 20 (the host's, which goes into the base image):
#   scripts/deploy/container-check.sh
# No registry image is pulled: the base image (Debian 12 from debootstrap with the host's Node 20 and a `node` user,
# standing in for node:20-bookworm-slim) is built here once, kept as localhost/simarena-base:bookworm-node20, and passed
# as the build argument BASE_IMAGE. The build reaches Debian's mirror and the npm registry (--network=host).
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE=${BASE:-localhost/simarena-base:bookworm-node20}
IMAGE=${IMAGE:-localhost/simarena:check}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
NAME=simarena-check-$$
VOLUME=simarena-check-data-$$
PORT=${PORT:-3980}
# Inside some sandboxes (cgroup v1 with controllers on the unified mount, no CAP_SYS_RESOURCE) crun refuses to start
# and neither runtime may raise resource limits: runc with limits at or below the current ones works there, and
# everywhere else too.
RUNTIME=()
if command -v runc >/dev/null 2>&1; then RUNTIME=(--runtime runc); fi
hard_nofile=$(ulimit -Hn)
[ "$hard_nofile" = unlimited ] && hard_nofile=65536
LIMITS=(--ulimit "nofile=$hard_nofile:$hard_nofile" --ulimit nproc=4096:4096)
# Without systemd, podman cannot set the timer of the image's HEALTHCHECK and says so on every start and stop; the
# check runs the HEALTHCHECK once by hand instead, and those lines are left out.
podman() { command podman "${RUNTIME[@]}" "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
fail() {
  printf 'container-check: FAILED: %s\n' "$1" >&2
  podman logs "$NAME" 2>&1 | tail -n 30 >&2 || true
  exit 1
}
cleanup() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  [ -n "${ROOTFS:-}" ] && rm -rf "$ROOTFS"
  return 0
}
trap cleanup EXIT

command -v podman >/dev/null || fail "podman is missing: apt-get install podman runc"
node --version | grep -q '^v20\.' || fail "the host's Node is $(node --version), the base image needs Node 20"

build_base() {
  command -v debootstrap >/dev/null || fail "debootstrap is missing: apt-get install debootstrap"
  ROOTFS=$(mktemp -d /var/tmp/simarena-rootfs.XXXXXX)
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || { tail -n 20 "$ROOTFS.log"; fail "debootstrap"; }
  rm -f "$ROOTFS.log"
  # Node 20 as node:20-bookworm-slim has it (Debian 12 ships 18): the host's binary and its npm.
  local node_bin npm_dir
  node_bin=$(readlink -f "$(command -v node)")
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  install -m 0755 "$node_bin" "$ROOTFS/usr/local/bin/node"
  mkdir -p "$ROOTFS/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$ROOTFS/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
  # The unprivileged user of the official image (uid and gid 1000).
  chroot "$ROOTFS" groupadd --gid 1000 node
  chroot "$ROOTFS" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # Node's headers, as the official image has them, so that compiling better-sqlite3 downloads nothing more.
  [ -d /usr/include/node ] && mkdir -p "$ROOTFS/usr/local/include" && cp -a /usr/include/node "$ROOTFS/usr/local/include/node"
  # The host's certificate authorities: where HTTPS leaves the machine through an intercepting proxy, npm in the
  # build trusts what the host trusts (minbase has no ca-certificates package of its own).
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin
  tar -C "$ROOTFS" -c . | podman import --change 'CMD ["node"]' \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV npm_config_nodedir=/usr/local' - "$BASE" >/dev/null
  rm -rf "$ROOTFS"
  ROOTFS=
}

step "base image $BASE"
if podman image exists "$BASE"; then echo "kept from an earlier run"; else build_base; fi
podman run --rm "${LIMITS[@]}" "$BASE" node --version

step "image $IMAGE from the Dockerfile"
podman build "${LIMITS[@]}" --network=host --format docker --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" . >/tmp/simarena-container-build.log 2>&1 || { tail -n 40 /tmp/simarena-container-build.log; fail "podman build"; }
tail -n 3 /tmp/simarena-container-build.log
podman run --rm "${LIMITS[@]}" --entrypoint sh "$IMAGE" -c 'test ! -e src && test ! -e node_modules/typescript && test ! -e node_modules/vitest && test -f dist/server.js' ||
  fail "the runtime stage holds sources or development dependencies"

run_server() {
  podman run -d --name "$NAME" "${LIMITS[@]}" --network=host -e PORT="$PORT" -e HOST=127.0.0.1 -e SESSION_SECRET=container-check-session-secret-0123456789 \
    -v "$VOLUME:/var/lib/simarena" "$IMAGE" >/dev/null
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  fail "/healthz did not answer within 60 s"
}
stop_server() {
  podman stop --time 30 "$NAME" >/dev/null
  [ "$(podman inspect --format '{{.State.ExitCode}}' "$NAME")" = 0 ] || fail "the server did not exit 0 on SIGTERM"
  podman logs "$NAME" 2>&1 | grep -q 'simarena stopped' || fail "no clean shutdown in the logs"
  podman rm "$NAME" >/dev/null
}
judgments() {
  podman run --rm "${LIMITS[@]}" -v "$VOLUME:/var/lib/simarena" --entrypoint node "$IMAGE" -e \
    "const db = new (require('better-sqlite3'))('/var/lib/simarena/simarena.db', { readonly: true }); console.log(db.prepare('SELECT id FROM judgments ORDER BY id').pluck().all().join(','))"
}

step "first start on an empty volume"
podman volume create "$VOLUME" >/dev/null
run_server
curl -fsS "http://127.0.0.1:$PORT/healthz"; echo
podman healthcheck run "$NAME" || fail "the image's HEALTHCHECK"
echo "HEALTHCHECK: healthy"
uid=$(podman exec "$NAME" sh -c "awk '/^Uid:/ { print \$2 }' /proc/1/status")
echo "the server (PID 1) runs as uid $uid"
[ "$uid" != 0 ] || fail "the server process runs as root"
podman exec "$NAME" sh -c 'tr "\0" " " < /proc/1/cmdline; echo'
link=$(podman logs "$NAME" 2>&1 | grep -o 'Rater link of demo batch "[^"]*": http[^ ]*' | head -n 1 | sed 's/.*": //')
[ -n "$link" ] || fail "no demo rater link in the start-up banner"

step "a rater walks the demo batch"
npx tsx scripts/deploy/rater-walk.ts "$link" || fail "the rater walk"

step "a backup with the image's CLI (compiled), the server running"
podman exec "$NAME" node bin/simarena.js backup /var/lib/simarena/backup.db || fail "simarena backup in the container"

step "SIGTERM"
stop_server
before=$(judgments)
[ -n "$before" ] || fail "no judgment stored"
echo "judgments stored: $before"

step "restart on the same volume"
run_server
npx tsx scripts/deploy/rater-walk.ts "$link" || fail "the second rater walk"
stop_server
after=$(judgments)
echo "judgments stored: $after"
case ",$after," in *",$before,"*) ;; *) fail "judgments of the first run are missing after the restart" ;; esac
[ "$after" != "$before" ] || fail "the second rater's judgments were not stored"

step "container check passed"
