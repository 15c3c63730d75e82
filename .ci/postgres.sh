# Sourced by .ci/run: makes sure a local PostgreSQL serves the store tests, then exports
# PADDOCK_TEST_POSTGRES_URL, _USER and _PASSWORD for them. Debian's server package and its default
# cluster, listening on loopback only (Debian's default listen_addresses = 'localhost'). Every step
# checks first, so running it again (or on a machine that kept the cluster) changes nothing.

pg_role=paddock_test
pg_database=paddock_test

if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi

# The first cluster, created when the package left none (e.g. it was dropped).
if [ -z "$(pg_lsclusters -h)" ]; then
  pg_createcluster "$(basename "$(ls -d /usr/lib/postgresql/*/ | sort -V | tail -n 1)")" main
fi
read -r pg_version pg_cluster pg_port pg_status _ < <(pg_lsclusters -h | head -n 1)
if [[ $pg_status != online* ]]; then
  source .ci/daemon.sh
  ci_daemon pg_ctlcluster "$pg_version" "$pg_cluster" start
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$pg_port" && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p "$pg_port"

pg_admin() {
  (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$pg_port" -tA "$@")
}
if [ "$(pg_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$pg_role'")" != 1 ]; then
  pg_admin -c "CREATE ROLE $pg_role LOGIN PASSWORD '$pg_role'"
fi
if [ "$(pg_admin -c "SELECT 1 FROM pg_database WHERE datname = '$pg_database'")" != 1 ]; then
  pg_admin -c "CREATE DATABASE $pg_database OWNER $pg_role"
fi

export PADDOCK_TEST_POSTGRES_URL="jdbc:postgresql://127.0.0.1:$pg_port/$pg_database"
export PADDOCK_TEST_POSTGRES_USER=$pg_role
export PADDOCK_TEST_POSTGRES_PASSWORD=$pg_role
echo "CI: PostgreSQL $pg_version on 127.0.0.1:$pg_port, database $pg_database for the store tests"
