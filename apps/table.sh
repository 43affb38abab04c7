# apps/table.sh: reads the scenario table (apps/scenarios). Sourced by apps/run-apps on this
# machine and by apps/guest-apps in the reference VM, so both read one table the same way.
# Needs $table (the path of the table).
# shellcheck disable=SC2154 # table and run_prefix are the sourcing script's

# The names of the scenarios, in table order.
table_names() {
	sed -n 's/^\[\([A-Za-z0-9_.-]*\)\][[:space:]]*$/\1/p' "$table"
}

# The value of key $2 in scenario $1 (the first such line; empty when absent).
table_get() {
	awk -v want="$1" -v key="$2" '
		/^\[/ { cur = $0; sub(/^\[/, "", cur); sub(/\][[:space:]]*$/, "", cur); next }
		cur == want && $1 == key {
			v = $0; sub(/^[^[:space:]]+[[:space:]]+/, "", v); print v; exit
		}' "$table"
}

# Every value of key $2 in scenario $1, one a line.
table_all() {
	awk -v want="$1" -v key="$2" '
		/^\[/ { cur = $0; sub(/^\[/, "", cur); sub(/\][[:space:]]*$/, "", cur); next }
		cur == want && $1 == key { v = $0; sub(/^[^[:space:]]+[[:space:]]+/, "", v); print v }' "$table"
}

# Runs the command line $2 with a limit of $1 seconds, output (stdout and stderr) to $3 and
# the status ("exit N", "timeout") to $4. A wrapper of the caller's (the emulator's run) goes
# in $run_prefix.
run_side() {
	rs_t=$1 rs_cmd=$2 rs_out=$3 rs_st=$4
	rs_rc=0
	# shellcheck disable=SC2086 # run_prefix is a word list
	timeout -k 3 "$rs_t" $run_prefix /bin/sh -c "$rs_cmd" >"$rs_out" 2>&1 </dev/null &
	echo $! >"$rs_st.pid"
	wait $! || rs_rc=$?
	rm -f "$rs_st.pid"
	case $rs_rc in
	124|137) echo "timeout" >"$rs_st" ;;
	*) echo "exit $rs_rc" >"$rs_st" ;;
	esac
}

# Starts the server of scenario $1 in the background (output and status under $2), sets
# server_pid.
start_server() {
	ss_t=$(table_get "$1" timeout)
	# (the subshell's stderr only carries the shell's own note of a stopped server)
	run_side "${ss_t:-30}" "$(table_get "$1" server)" "$2/server.out" "$2/server.status" 2>/dev/null &
	server_pid=$!
}

# Waits for the server started by start_server: a server that `stays` is stopped now, its
# status then is "stopped".
finish_server() {
	if [ "$(table_get "$1" stays)" = yes ]; then
		sleep 1
		# timeout's TERM goes on to its whole process group (the shell and the server) at once
		kill -TERM "$(cat "$2/server.status.pid" 2>/dev/null)" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		echo "stopped" >"$2/server.status"
	else
		wait "$server_pid" 2>/dev/null || true
	fi
}
