# tests/tools/clickhouse.sh — ClickHouse servers for the fleet tests, the bench
# and `make demo-fleet`: plain processes (no systemd) on loopback ports, each
# with its data and config under a directory the caller owns, stopped by pid.
# Source it, then:
#   ch_start DIR NAME       start a server (config in DIR/NAME, data in DIR/NAME/data);
#                           sets CH_HTTP_<NAME>, CH_TCP_<NAME>; waits until it answers
#   ch_spawn DIR NAME, ch_wait NAME   the same in two steps (servers starting together)
#   ch_stop NAME            stop it (SIGTERM, then SIGKILL), by pid
#   ch_stop_all             every server started (use in a trap)
#   ch_sql NAME SQL         run SQL over HTTP, print the answer, fail on an error
# A cluster "proff_fleet" of every server given in CH_SHARDS (names, before
# the first ch_start) is in each config, for Distributed tables.

CH_PIDS=()
CH_NAMES=()
CH_SHARDS=${CH_SHARDS:-}

ch_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# the ports of every shard are chosen before any server starts: each config names them all
ch_plan() {
	local n
	for n in $CH_SHARDS; do
		eval "CH_HTTP_$n=\$(ch_free_port); CH_TCP_$n=\$(ch_free_port)"
	done
}

ch_config() {
	local dir=$1 name=$2 http=$3 tcp=$4 n
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas"
	{
		echo '<?xml version="1.0"?>'
		echo '<yandex>'
		echo "  <logger><level>warning</level><log>$dir/server.log</log><errorlog>$dir/server.err.log</errorlog><console>0</console></logger>"
		echo "  <listen_host>127.0.0.1</listen_host>"
		echo "  <http_port>$http</http_port><tcp_port>$tcp</tcp_port>"
		echo "  <path>$dir/data/</path><tmp_path>$dir/tmp/</tmp_path>"
		echo "  <user_files_path>$dir/user_files/</user_files_path><format_schema_path>$dir/format_schemas/</format_schema_path>"
		echo "  <users_config>$dir/users.xml</users_config>"
		echo "  <default_profile>default</default_profile><default_database>default</default_database>"
		echo "  <mark_cache_size>268435456</mark_cache_size><uncompressed_cache_size>268435456</uncompressed_cache_size>"
		echo "  <max_concurrent_queries>20</max_concurrent_queries>"
		if [ -n "$CH_SHARDS" ]; then
			echo "  <remote_servers><proff_fleet>"
			for n in $CH_SHARDS; do
				eval "local t=\$CH_TCP_$n"
				echo "    <shard><replica><host>127.0.0.1</host><port>$t</port></replica></shard>"
			done
			echo "  </proff_fleet></remote_servers>"
		fi
		echo '</yandex>'
	} >"$dir/config.xml"
	cat >"$dir/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
EOF
}

# ch_spawn DIR NAME: start without waiting (then ch_wait NAME)
ch_spawn() {
	local base=$1 name=$2 dir http tcp
	dir=$base/$name
	eval "http=\${CH_HTTP_$name:-}; tcp=\${CH_TCP_$name:-}"
	[ -n "$http" ] || { http=$(ch_free_port); tcp=$(ch_free_port); eval "CH_HTTP_$name=$http; CH_TCP_$name=$tcp"; }
	ch_config "$dir" "$name" "$http" "$tcp"
	clickhouse-server --config-file="$dir/config.xml" >"$dir/stdout" 2>&1 &
	local pid=$!
	CH_PIDS+=("$pid")
	CH_NAMES+=("$name")
	eval "CH_PID_$name=$pid; CH_DIR_$name=$dir"
}

ch_wait() {
	local name=$1 http pid dir i
	eval "http=\$CH_HTTP_$name; pid=\$CH_PID_$name; dir=\$CH_DIR_$name"
	for i in $(seq 1 300); do
		curl -sf "http://127.0.0.1:$http/ping" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "clickhouse-server $name did not start:" >&2
	tail -5 "$dir/server.err.log" "$dir/stdout" >&2 2>/dev/null
	return 1
}

ch_start() {
	ch_spawn "$1" "$2" && ch_wait "$2"
}

ch_stop() {
	local name=$1 pid i
	eval "pid=\${CH_PID_$name:-}"
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	eval "CH_PID_$name="
	return 0
}

ch_stop_all() {
	local n
	for n in "${CH_NAMES[@]}"; do
		ch_stop "$n"
	done
}

ch_sql() {
	local name=$1 sql=$2 http
	eval "http=\$CH_HTTP_$name"
	curl -sf --data-binary "$sql" "http://127.0.0.1:$http/"
}
