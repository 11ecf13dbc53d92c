#!/usr/bin/env bash
# Starts each service the tests may use when this machine has it but it is not answering on its port: PostgreSQL,
# RabbitMQ, NATS with JetStream, Redis. A service the machine lacks is installed from Debian's packages. Never stops
# or restarts one that runs.
set -uo pipefail

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
  for _ in $(seq 1 60); do answers "$1" && return 0; sleep 1; done
  echo "services: nothing answers on 127.0.0.1:$1 after 60 s" >&2
}

install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null
}

if ! answers 5432; then
  command -v pg_ctlcluster >/dev/null 2>&1 || install postgresql
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  wait_for 5432
fi

if ! answers 5672; then
  command -v rabbitmq-server >/dev/null 2>&1 || install rabbitmq-server
  rabbitmq-server -detached || true
  wait_for 5672
fi

if ! answers 4222; then
  [ -x /usr/sbin/nats-server ] || install nats-server
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for 4222
fi

if ! answers 6379; then
  command -v redis-server >/dev/null 2>&1 || install redis-server
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis \
    --logfile /var/log/redis/ci.log
  wait_for 6379
fi
exit 0
