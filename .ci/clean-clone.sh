#!/usr/bin/env bash
# A newcomer's first minutes, checked on a clean clone of the committed tree:
#   1. `npm install` leaves `git status` clean;
#   2. `npx herald --help` works (the bin, on the project's Node 24);
#   3. README.md, docs/ and the code's comments stand alone: no line points at ../shared, SPEC or seed sections, or
#      issue numbers;
#   4. the README's walk-through, its commands extracted from README.md itself, runs against a started Herald: a
#      verified delivery, a delivery that fails, and its redelivery verified.
# Prints how long the clone took to reach its first verified delivery.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pgid in "${pids[@]}"; do kill -TERM -- "-$pgid" 2>/dev/null || true; done
  sleep 1
  for pgid in "${pids[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== clean clone: %s\n' "$*"; }
fail() { printf 'clean clone: FAILED: %s\n' "$*" >&2; exit 1; }

# A newcomer's terminal has no DATABASE_URL (CI exports one for the tests): the walk-through runs on embedded SQLite.
unset DATABASE_URL
started=$(date +%s)
git clone -q "$repo" "$work/herald"
cd "$work/herald"

step 'npm install leaves git status clean'
npm install --no-audit --no-fund
changed="$(git status --porcelain)"
[ -z "$changed" ] || fail "npm install changed the clone:"$'\n'"$changed"

step 'npx herald --help'
npx herald --help | tee "$work/help.txt"
grep -q '^Usage: herald <command>' "$work/help.txt" || fail 'npx herald --help printed no usage'

step 'README.md and docs/ stand alone'
if grep -nE "\.\./shared|\bSPEC\b|§|\b[Ss]eed('s| section|:| [0-9])|\(seed\b|\b[Ii]ssues? #?[0-9]+" \
  README.md docs/*.md packages/*/README.md; then
  fail 'the lines above point at files or numbers a reader of the repository does not have'
fi
# The code is read too (and the receiver kit and the page's assets ship): the same, in its comments.
if grep -rnE "\.\./shared|\bSPEC\b|\b[Ss]eed('s| section| §| [0-9])|\b[Ii]ssues? #?[0-9]+" src packages/*/src; then
  fail 'the lines above point at files or numbers a reader of the repository does not have'
fi

# The walk-through's blocks: the ```sh fence after each "<!-- walk-through: NAME -->".
block() {
  awk -v name="$1" '
    $0 == "<!-- walk-through: " name " -->" { found = 1; next }
    found && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' README.md | grep . || fail "README.md has no walk-through block \"$1\""
}
# Starts a terminal's command in a process group of its own (Ctrl-C there reaches it alone).
terminal() {
  setsid bash -c "$1" >"$2" 2>&1 &
  pids+=("$!")
  echo "$!"
}
wait_for() { # FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -qE "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || { cat "$1" >&2; fail "no /$2/ in $1 within $3 s"; }
    sleep 0.2
  done
}

step 'walk-through: terminal 1 (Herald) and terminal 2 (the receiver)'
terminal "$(block herald)" "$work/herald.log" >/dev/null
wait_for "$work/herald.log" '^Herald is listening on http://127\.0\.0\.1:8080' 120
receiver=$(terminal "$(block receiver)" "$work/receiver.log")
wait_for "$work/receiver.log" '^Reference receiver on' 60

# Terminal 3 is one shell, as a person's would be; between blocks it does what the README asks of the person.
{
  echo 'set -euo pipefail'
  declare -f wait_for fail
  block publish
  echo "wait_for '$work/receiver.log' 'verified\$' 30"
  echo "echo \"first verified delivery \$((\$(date +%s) - $started)) s after git clone\" >'$work/first.txt'"
  block log
  echo "kill -INT -- -$receiver; while kill -0 -- -$receiver 2>/dev/null; do sleep 0.2; done"
  block fail
  echo "setsid bash -c '$(block receiver)' >'$work/receiver2.log' 2>&1 & echo \$! >'$work/receiver2.pid'"
  echo "wait_for '$work/receiver2.log' '^Reference receiver on' 60"
  block redeliver
  echo "wait_for '$work/receiver2.log' \"\$EVT +verified\$\" 30"
} >"$work/terminal3.sh"
step 'walk-through: terminal 3'
bash "$work/terminal3.sh"
pids+=("$(cat "$work/receiver2.pid")")
cat "$work/receiver.log" "$work/receiver2.log"
cat "$work/first.txt"
echo "clean clone: passed ($(($(date +%s) - started)) s in all)"
