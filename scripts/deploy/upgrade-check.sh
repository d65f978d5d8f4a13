#!/usr/bin/env bash
# An upgrade and a restore, end to end, with two versions side by side as an operator has them:
#   1. the old version (a git ref, exported as a release would be) serves a study on machine A; a rater answers;
#   2. back up with the old version's CLI while it runs; stop it;
#   3. install the new version (this checkout), `simarena migrate`, `npm start`: every judgment is there, a rater answers;
#   4. restore the backup onto machine B (a fresh directory), start the new version there: the backup's judgments are
#      there and the database is migrated.
#   scripts/deploy/upgrade-check.sh [OLD_REF]
# OLD_REF defaults to the parent of the last commit that added a migration, so the upgrade applies at least one.
# The old version reuses this checkout's node_modules when its package-lock.json is the same, else runs npm ci.
set -euo pipefail
cd "$(dirname "$0")/../.."
NEW=$(pwd)
OLD_REF=${1:-$(git log -1 --format=%H --diff-filter=A -- src/db/migrations/)^}
WORK=$(mktemp -d /tmp/simarena-upgrade.XXXXXX)
PORT=${PORT:-3981}
SERVER_PGID=
export SESSION_SECRET=upgrade-check-session-secret-0123456789 HOST=127.0.0.1 PORT LOG_LEVEL=warn

step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
fail() {
  printf 'upgrade-check: FAILED: %s\n' "$1" >&2
  exit 1
}
stop_server() {
  [ -n "$SERVER_PGID" ] || return 0
  kill -TERM -- "-$SERVER_PGID" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 -- "-$SERVER_PGID" 2>/dev/null || break; sleep 0.5; done
  if kill -0 -- "-$SERVER_PGID" 2>/dev/null; then
    kill -KILL -- "-$SERVER_PGID"
    SERVER_PGID=
    fail "the server did not stop within 30 s of SIGTERM"
  fi
  SERVER_PGID=
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT

# npm start of the checkout $1 on the database $2, in a process group of its own (npm, its shell and node all get the
# SIGTERM), until /healthz answers.
start_server() {
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then fail "something already answers on port $PORT"; fi
  # The subshell becomes setsid (exec), which makes its own process group with the subshell's pid.
  (cd "$1" && DATABASE_PATH=$2 exec setsid npm start >"$WORK/server.log" 2>&1) &
  SERVER_PGID=$!
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  cat "$WORK/server.log" >&2
  fail "the server in $1 did not answer /healthz within 60 s"
}
demo_link() { grep -o 'Rater link of demo batch "[^"]*": http[^ ]*' "$WORK/server.log" | head -n 1 | sed 's/.*": //'; }
judgment_ids() {
  node -e "const db = new (require('better-sqlite3'))(process.argv[1], { readonly: true }); console.log(db.prepare('SELECT id FROM judgments ORDER BY id').pluck().all().join(','))" "$1"
}
migration_count() {
  node -e "const db = new (require('better-sqlite3'))(process.argv[1], { readonly: true }); console.log(db.prepare('SELECT count(*) FROM schema_migrations').pluck().get())" "$1"
}

step "old version $(git rev-parse --short "$OLD_REF") exported to $WORK/old"
mkdir -p "$WORK/old" "$WORK/machine-a" "$WORK/machine-b"
git archive "$OLD_REF" | tar -x -C "$WORK/old"
if git diff --quiet "$OLD_REF" HEAD -- package-lock.json && [ -d node_modules ]; then
  ln -s "$NEW/node_modules" "$WORK/old/node_modules"
else
  (cd "$WORK/old" && npm ci --no-audit --no-fund)
fi
A=$WORK/machine-a/simarena.db
start_server "$WORK/old" "$A"
# The demo batch's link, printed at the first start only.
LINK=$(demo_link)
npx tsx scripts/deploy/rater-walk.ts "$LINK" || fail "a rater on the old version"

step "backup with the old version's CLI, the server running"
(cd "$WORK/old" && DATABASE_PATH=$A node bin/simarena.js backup "$WORK/backup.db")
stop_server
backed_up=$(judgment_ids "$WORK/backup.db")
[ -n "$backed_up" ] || fail "the backup holds no judgment"
old_migrations=$(migration_count "$A")
echo "judgments in the backup: $backed_up; migrations applied by the old version: $old_migrations"

step "new version: migrate, then npm start on machine A"
DATABASE_PATH=$A node bin/simarena.js migrate
start_server "$NEW" "$A"
[ "$(judgment_ids "$A")" = "$backed_up" ] || fail "judgments changed in the upgrade"
npx tsx scripts/deploy/rater-walk.ts "$LINK" || fail "a rater on the new version"
stop_server
echo "judgments after the upgrade and a new rater: $(judgment_ids "$A"); migrations: $(migration_count "$A")"
[ "$(migration_count "$A")" -gt "$old_migrations" ] || echo "(no migration between the two versions)"

step "restore the backup onto machine B and start the new version"
cp "$WORK/backup.db" "$WORK/machine-b/simarena.db"
start_server "$NEW" "$WORK/machine-b/simarena.db"
curl -fsS "http://127.0.0.1:$PORT/healthz"; echo
stop_server
[ "$(judgment_ids "$WORK/machine-b/simarena.db")" = "$backed_up" ] || fail "the restored database does not hold the backup's judgments"
[ "$(migration_count "$WORK/machine-b/simarena.db")" = "$(migration_count "$A")" ] || fail "the restored database was not migrated"
echo "restored: judgments $backed_up; migrations $(migration_count "$WORK/machine-b/simarena.db")"

step "upgrade check passed"
