#!/usr/bin/env bash
# The container image (Containerfile), built and run as an operator would, with podman:
#   1. a Debian minbase base image (no Node in it), built once from Debian's packages with debootstrap and cached
#      under /var/tmp, so that a second run on the same machine reuses it;
#   2. the image, built from this clone after `npm install`; its build time and size are printed (at most 400 MB);
#   3. a container on a volume: /healthz answers, the HEALTHCHECK passes, Herald runs as its own user, and an event
#      published from the host with the admin key is delivered to a receiver on the host, signature verified;
#   4. `podman stop` (SIGTERM) ends it with exit code 0;
#   5. a new container on the same volume still has the instance and its webhook (and the key that seals its
#      secret: the next delivery verifies);
#   6. when Herald's own process dies, the container ends with it;
#   7. compose.yaml: `docker-compose config` accepts it, and `docker-compose up` (Debian's docker-compose, talking to
#      podman's API) starts Herald on PostgreSQL only once PostgreSQL is healthy; an instance outlives `down` and `up`.
#      No registry is reachable here, so PostgreSQL's image is built from Debian's package (.ci/postgres), and podman
#      without systemd runs no health checks by itself: this script runs PostgreSQL's (podman healthcheck run).
# Networking: steps 3-6 use --network host, Herald on a free port; compose uses its own bridge network, its port
# published on 127.0.0.1. Every request goes to 127.0.0.1.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
export CONTAINERS_CONF="$repo/.ci/containers.conf"
step() { printf '\n== container: %s\n' "$*"; }
fail() { printf 'container: FAILED: %s\n' "$*" >&2; exit 1; }

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null ||
  ! command -v docker-compose >/dev/null; then
  step 'installing podman, runc, debootstrap and docker-compose'
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q podman runc debootstrap uidmap slirp4netns fuse-overlayfs docker-compose
fi

tag="herald-ci-$$"
image="localhost/herald:ci"
volume="$tag-data"
work="$(mktemp -d)"
receiver_pid=""
service_pid=""
compose=(docker-compose -p "$tag" -f compose.yaml)
cleanup() {
  for c in "$tag-1" "$tag-2" "$tag-3"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  if [ -n "$service_pid" ]; then
    "${compose[@]}" down -v -t 5 >/dev/null 2>&1 || true
    kill -TERM "$service_pid" 2>/dev/null || true
  fi
  [ -n "$receiver_pid" ] && kill -TERM -- "-$receiver_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# podman without systemd cannot schedule health checks; the tests run them by hand (podman healthcheck run).
run_opts=(--network host --health-interval disable -v "$volume:/data")

step 'base image: Debian bookworm minbase'
base="localhost/herald-base:bookworm"
base_tar="/var/tmp/herald-ci/debian-bookworm-minbase.tar"
if podman image exists "$base"; then
  echo "reusing $base"
else
  if [ ! -s "$base_tar" ]; then
    mkdir -p "$(dirname "$base_tar")"
    rootfs="$(mktemp -d /var/tmp/herald-ci/rootfs.XXXXXX)"
    debootstrap --variant=minbase bookworm "$rootfs" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; fail 'debootstrap'; }
    # What Debian's own images leave out: package lists and downloaded packages.
    rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
      "$rootfs"/tmp/*
    tar -C "$rootfs" --numeric-owner -c . >"$base_tar.partial"
    mv "$base_tar.partial" "$base_tar"
    rm -rf "$rootfs"
  fi
  podman import --quiet --change 'CMD ["/bin/bash"]' "$base_tar" "$base" >/dev/null
fi
podman run --rm "$base" sh -c '! command -v node' || fail "$base has a node of its own"

step 'build'
started=$(date +%s%N)
podman build --format docker --build-arg BASE_IMAGE="$base" -t "$image" . >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; fail 'podman build'; }
build_s=$((($(date +%s%N) - started) / 1000000000))
# Neither the build stage (the whole node_modules) nor the images this tag named before are kept.
podman image prune -f --filter label=herald.stage=build >/dev/null
podman image prune -f --filter label=org.opencontainers.image.title=Herald >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$image")
size_mb=$((size / 1000 / 1000))
printf 'image %s: %s MB (base %s MB), built in %s s\n' "$image" "$size_mb" \
  "$(($(podman image inspect --format '{{.Size}}' "$base") / 1000 / 1000))" "$build_s"
[ "$size_mb" -le 400 ] || fail "the image is $size_mb MB; at most 400 MB on a Debian minbase"

node24="$repo/node_modules/node/bin/node"
free_port() { "$node24" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port=$(free_port)
receiver_port=$(free_port)
herald="http://127.0.0.1:$port"
key="hk_admin_ci_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
auth=(-H "Authorization: Bearer $key" -H 'Content-Type: application/json')
field() { sed -E "s/.*\"$1\":\"?([^\",}]*).*/\1/"; }
env_opts=(-e "PORT=$port" -e "ADMIN_API_KEY=$key" -e ALLOW_PRIVATE_DESTINATIONS=true -e RETRY_SCHEDULE=1,1)

start() { # container name
  # (podman without systemd says, harmlessly, that it cannot schedule health checks: they are run by hand here.)
  podman run -d --name "$1" "${run_opts[@]}" "${env_opts[@]}" "$image" 2>&1 >/dev/null | grep -v 'systemd connection' >&2 || true
  podman container exists "$1" || fail "podman run $1"
}
wait_healthy() {
  for _ in $(seq 150); do
    curl -fsS "$herald/healthz" >/dev/null 2>&1 && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "$1")" = true ] || { podman logs "$1"; fail "$1 exited"; }
    sleep 0.2
  done
  podman logs "$1"
  fail "$1: /healthz did not answer within 30 s"
}
wait_delivered() { # event id
  for _ in $(seq 100); do
    grep -q "$1  verified" "$work/receiver.log" && return 0
    sleep 0.2
  done
  cat "$work/receiver.log"
  fail "event $1 was not delivered (verified) to the receiver on the host within 20 s"
}
stop_cleanly() { # container
  # (podman without systemd reports, harmlessly, that it has no health-check timer to remove.)
  podman stop -t 20 "$1" 2>&1 >/dev/null | grep -v 'systemd connection' >&2 || true
  code=$(podman inspect --format '{{.State.ExitCode}}' "$1")
  [ "$code" = 0 ] || { podman logs "$1"; fail "$1 exited $code after SIGTERM; expected 0"; }
  podman logs "$1" >"$work/logs.txt" 2>&1
  grep -q 'SIGTERM received' "$work/logs.txt" || fail "$1 did not log the SIGTERM it was stopped with"
  echo "$1: podman stop → exit code 0"
}
publish() { # text → event id
  curl -fsS "${auth[@]}" -X POST "$herald/instances/$ins/events" \
    -d "{\"event\":\"message\",\"payload\":{\"id\":\"ci_$1\",\"from\":\"491701234567@c.us\",\"fromMe\":false,\"body\":\"$1\",\"hasMedia\":false}}" |
    field event_id
}

step 'a receiver on the host'
setsid npx herald receiver --port "$receiver_port" --secret whsec_container_ci >"$work/receiver.log" 2>&1 &
receiver_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$receiver_port/" && break; sleep 0.2; done

step 'run on a volume: health, user, a delivery to the host'
podman volume create "$volume" >/dev/null
start "$tag-1"
wait_healthy "$tag-1"
podman healthcheck run "$tag-1" >/dev/null || fail 'the HEALTHCHECK failed on a running Herald'
uid=$(podman exec "$tag-1" /usr/local/bin/node -e 'console.log(process.getuid())')
[ "$uid" != 0 ] || fail 'Herald runs as root'
echo "Herald runs as uid $uid; HEALTHCHECK healthy"
ins=$(curl -fsS "${auth[@]}" -X POST "$herald/instances" -d '{"name":"container-ci"}' | field instance_id)
whk=$(curl -fsS "${auth[@]}" -X POST "$herald/instances/$ins/webhooks" \
  -d "{\"destination_url\":\"http://127.0.0.1:$receiver_port/\",\"events\":[\"message\"],\"client_sign_secret\":\"whsec_container_ci\"}" |
  field webhook_id)
curl -fsS "${auth[@]}" -X POST "$herald/instances/$ins/webhooks/$whk/enabled" -d '{"enabled":true}' >/dev/null
evt=$(publish 'before the restart')
wait_delivered "$evt"
echo "event $evt delivered to the host's receiver, verified"
stop_cleanly "$tag-1"

step 'a new container on the same volume'
start "$tag-2"
wait_healthy "$tag-2"
curl -fsS "${auth[@]}" "$herald/instances/$ins" | grep -q '"name":"container-ci"' ||
  fail "instance $ins is gone after the restart"
curl -fsS "${auth[@]}" "$herald/instances/$ins/webhooks/$whk" | grep -q '"enabled":true' ||
  fail "webhook $whk is gone (or disabled) after the restart"
evt=$(publish 'after the restart')
wait_delivered "$evt"
echo "instance $ins and webhook $whk kept; event $evt delivered, verified"
stop_cleanly "$tag-2"

step 'the container ends with Herald'
start "$tag-3"
wait_healthy "$tag-3"
# PID 1 is the launcher; Herald is its child (the process running src/main.ts).
podman exec "$tag-3" /usr/local/bin/node -e '
  const fs = require("node:fs");
  const pid = fs.readdirSync("/proc").find((p) => /^\d+$/.test(p) && p !== "1" &&
    fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("src/main.ts"));
  process.kill(Number(pid), "SIGKILL");'
for _ in $(seq 50); do
  [ "$(podman inspect --format '{{.State.Running}}' "$tag-3")" = false ] && break
  sleep 0.2
done
[ "$(podman inspect --format '{{.State.Running}}' "$tag-3")" = false ] ||
  fail 'the container still runs after Herald was killed'
echo "Herald killed: the container ended with exit code $(podman inspect --format '{{.State.ExitCode}}' "$tag-3")"

step 'compose.yaml: Herald on PostgreSQL'
docker-compose -f compose.yaml config >/dev/null || fail 'docker-compose config refuses compose.yaml'
pg_image="localhost/herald-ci-postgres:15"
podman image exists "$pg_image" ||
  podman build -q --build-arg BASE_IMAGE="$base" -t "$pg_image" .ci/postgres >/dev/null
podman system service --time=0 "unix://$work/podman.sock" >"$work/service.log" 2>&1 &
service_pid=$!
export DOCKER_HOST="unix://$work/podman.sock"
for _ in $(seq 50); do [ -S "$work/podman.sock" ] && break; sleep 0.1; done
compose_port=$(free_port)
export POSTGRES_IMAGE="$pg_image" HERALD_IMAGE="$image" HERALD_PORT="$compose_port" ADMIN_API_KEY="$key" \
  PUBLIC_URL="http://127.0.0.1:$compose_port"
herald="http://127.0.0.1:$compose_port"
"${compose[@]}" up -d >"$work/compose.log" 2>&1 &
up_pid=$!
pg="${tag}_postgres_1"
for _ in $(seq 150); do
  podman exec "$pg" pg_isready -q -h 127.0.0.1 -U herald 2>/dev/null && break
  sleep 0.2
done
podman exec "$pg" pg_isready -q -h 127.0.0.1 -U herald || { cat "$work/compose.log"; fail 'PostgreSQL did not start'; }
# PostgreSQL answers, but its health check has not run yet: Herald must still be waiting.
! podman container exists "${tag}_herald_1" || fail 'compose started Herald before PostgreSQL was healthy'
podman healthcheck run "$pg" >/dev/null || fail "PostgreSQL's health check failed"
wait "$up_pid" || { cat "$work/compose.log"; fail 'docker-compose up'; }
wait_healthy "${tag}_herald_1"
curl -fsS "$herald/readyz" >/dev/null || fail 'compose: /readyz'
podman logs "${tag}_herald_1" >"$work/logs.txt" 2>&1
grep -q 'store      PostgreSQL' "$work/logs.txt" || fail 'compose: Herald is not on PostgreSQL'
ins=$(curl -fsS "${auth[@]}" -X POST "$herald/instances" -d '{"name":"compose-ci"}' | field instance_id)
"${compose[@]}" down -t 20 >"$work/compose.log" 2>&1 || { cat "$work/compose.log"; fail 'docker-compose down'; }
"${compose[@]}" up -d >"$work/compose.log" 2>&1 &
up_pid=$!
for _ in $(seq 150); do podman container exists "$pg" && break; sleep 0.2; done
for _ in $(seq 150); do podman healthcheck run "$pg" >/dev/null 2>&1 && break; sleep 0.2; done
wait "$up_pid" || { cat "$work/compose.log"; fail 'docker-compose up (again)'; }
wait_healthy "${tag}_herald_1"
curl -fsS "${auth[@]}" "$herald/instances/$ins" | grep -q '"name":"compose-ci"' ||
  fail "compose: instance $ins is gone after down and up"
echo "compose: Herald waited for PostgreSQL's health check; instance $ins kept across down and up"

printf '\ncontainer: passed (image %s MB, built in %s s)\n' "$size_mb" "$build_s"
