#!/usr/bin/env bash
# The rig: three switchyard replicas, each in a network namespace of its own
# with a veth pair and an address of its own, behind HAProxy in the root
# namespace running deploy/routing/haproxy.cfg. It stands in for a
# Kubernetes Deployment behind a model-affine load balancer, on one machine,
# so that affinity, a replica's death and a rolling restart can be measured
# (deploy/rig/README.md; rig_test.go drives it). Needs root, iproute2 and
# haproxy.
#
#   rig.sh up DIR            namespaces, addresses, the model store and each
#                            replica's config under DIR (nothing started)
#   rig.sh start DIR N       start replica N (1-3) and wait for /ping 200
#   rig.sh stop DIR N        SIGTERM replica N and wait until it has exited
#   rig.sh kill DIR N        SIGKILL replica N
#   rig.sh haproxy DIR MODE  (re)start HAProxy: MODE is affinity (the
#                            shipped file), unbounded (without
#                            hash-balance-factor) or roundrobin; prints
#                            the path of its log
#   rig.sh addr DIR N        replica N's address
#   rig.sh down DIR          end every process the rig started, by the pids
#                            it recorded and those left in its namespaces,
#                            and delete the namespaces
#
# Environment: SWITCHYARD (the binary; default bin/switchyard of the
# repository), RIG_PYTHON (the workers' interpreter; default the
# repository's .venv/bin/python, else python3), HAPROXY (default haproxy),
# RIG_PORT (HAProxy's port on 127.0.0.1; default 18480), RIG_LOAD_SECONDS
# (a model's load time; default 1), RIG_WORK_SECONDS (per request; default
# 0.005), RIG_GRACE (shutdown_grace_period; default 20).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
replicas=3
models=(model-a model-b model-c model-d model-e model-f)

die() {
	echo "rig: $*" >&2
	exit 1
}

# The rig's id, its namespaces, interfaces and addresses: one /30 per
# replica in 10.213.0.0/16, the host side .1 and the replica .2.
rig_id() { cat "$1/id"; }
ns() { echo "$(rig_id "$1")-$2"; }
host_if() { echo "$(rig_id "$1")h$2"; }
addr() { echo "10.213.$(($(cat "$1/net") + $2)).2"; }
host_addr() { echo "10.213.$(($(cat "$1/net") + $2)).1"; }

up() {
	local dir=$1
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ ! -e "$dir/id" ] || die "$dir holds a rig already (rig.sh down $dir first)"
	echo "syr$(($$ % 100000))" >"$dir/id"
	# Each rig takes three third octets of its own, from its id.
	echo $(($$ % 80 * 3)) >"$dir/net"
	ip netns list >/dev/null || die "ip netns does not work here"
	for n in $(seq 1 $replicas); do
		local ns hif
		ns=$(ns "$dir" "$n")
		hif=$(host_if "$dir" "$n")
		ip netns add "$ns"
		ip link add "$hif" type veth peer name eth0 netns "$ns"
		ip addr add "$(host_addr "$dir" "$n")/30" dev "$hif"
		ip link set "$hif" up
		ip -n "$ns" addr add "$(addr "$dir" "$n")/30" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		ip -n "$ns" route add default via "$(host_addr "$dir" "$n")"
	done
	store "$dir"
	for n in $(seq 1 $replicas); do
		config "$dir" "$n"
	done
}

# store makes six model folders from deploy/rig/model.
store() {
	for m in "${models[@]}"; do
		mkdir -p "$1/models/$m"
		cp "$here/model/model.py" "$here/model/serving.properties" "$1/models/$m/"
	done
}

# config writes replica N's config.properties: load on demand, room for
# three of the six models (each declares 100 MB; the budget is 350): its
# two on the hash ring and one that another replica spills to it.
config() {
	local dir=$1 n=$2 python
	python=${RIG_PYTHON:-}
	if [ -z "$python" ]; then
		if [ -x "$repo/.venv/bin/python" ]; then python=$repo/.venv/bin/python; else python=python3; fi
	fi
	mkdir -p "$dir/r$n/sock" "$dir/r$n/cache"
	cat >"$dir/r$n/config.properties" <<EOF
inference_address=http://$(addr "$dir" "$n"):8080
management_address=http://$(addr "$dir" "$n"):8084
model_store=$dir/models
load_models=ALL
load_on_demand=true
memory_budget_mb=350
socket_dir=$dir/r$n/sock
python_executable=$python
shutdown_grace_period=${RIG_GRACE:-20}
EOF
}

# ping_status prints the status code of GET /ping on replica N (000 when
# nothing answers), through bash's /dev/tcp.
ping_status() {
	local line
	if ! { exec 3<>"/dev/tcp/$(addr "$1" "$2")/8080"; } 2>/dev/null; then
		echo 000
		return
	fi
	printf 'GET /ping HTTP/1.0\r\n\r\n' >&3
	read -r -t 5 line <&3 || line=""
	exec 3<&-
	line=${line#HTTP/1.? }
	echo "${line%% *}" | grep -E '^[0-9]{3}$' || echo 000
}

start() {
	local dir=$1 n=$2 bin pid
	bin=${SWITCHYARD:-$repo/bin/switchyard}
	[ -x "$bin" ] || die "no switchyard binary at $bin (CGO_ENABLED=1 go build -o bin/switchyard ./cmd/switchyard)"
	alive "$dir/r$n/pid" && die "replica $n runs already"
	# ip netns exec and env exec in turn, so $! is the server's pid.
	ip netns exec "$(ns "$dir" "$n")" env SWITCHYARD_CACHE_DIR="$dir/r$n/cache" RIG_REPLICA="r$n" \
		RIG_LOAD_SECONDS="${RIG_LOAD_SECONDS:-1}" RIG_WORK_SECONDS="${RIG_WORK_SECONDS:-0.005}" \
		"$bin" serve --config "$dir/r$n/config.properties" >>"$dir/r$n/log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$dir/r$n/pid"
	for _ in $(seq 1 300); do
		[ "$(ping_status "$dir" "$n")" = 200 ] && return 0
		kill -0 "$pid" 2>/dev/null || die "replica $n exited; see $dir/r$n/log"
		sleep 0.1
	done
	die "replica $n did not answer /ping with 200 within 30 s"
}

# alive tells whether the pid in FILE runs (and is not a zombie).
alive() {
	[ -f "$1" ] || return 1
	local pid state
	pid=$(cat "$1")
	state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

stop() {
	local dir=$1 n=$2 pid
	alive "$dir/r$n/pid" || die "replica $n is not running"
	pid=$(cat "$dir/r$n/pid")
	kill -TERM "$pid"
	for _ in $(seq 1 $((${RIG_GRACE:-20} * 10 + 100))); do
		alive "$dir/r$n/pid" || return 0
		sleep 0.1
	done
	die "replica $n (pid $pid) still runs after its grace period"
}

kill_replica() {
	local dir=$1 n=$2
	alive "$dir/r$n/pid" || die "replica $n is not running"
	kill -KILL "$(cat "$dir/r$n/pid")"
}

# haproxy_cfg writes DIR/haproxy.cfg: the shipped file with the rig's three
# servers in place of its server-template, changed as MODE says.
haproxy_cfg() {
	local dir=$1 mode=$2 servers=""
	for n in $(seq 1 $replicas); do
		servers+="	server sy$n $(addr "$dir" "$n"):8080\n"
	done
	awk -v servers="$servers" '
		/# BEGIN servers/ { print; printf "%s", servers; skip = 1; next }
		/# END servers/ { skip = 0 }
		!skip { print }' "$repo/deploy/routing/haproxy.cfg" >"$dir/haproxy.cfg"
	case $mode in
	affinity) ;;
	unbounded) sed -i '/^\thash-balance-factor/d' "$dir/haproxy.cfg" ;;
	roundrobin) sed -i 's/^\tbalance hash .*/\tbalance roundrobin/; /^\thash-balance-factor/d; /^\thash-type/d' "$dir/haproxy.cfg" ;;
	*) die "haproxy mode $mode: want affinity, unbounded or roundrobin" ;;
	esac
}

haproxy_start() {
	local dir=$1 mode=$2 pid port log
	port=${RIG_PORT:-18480}
	haproxy_cfg "$dir" "$mode"
	if alive "$dir/haproxy.pid"; then
		pid=$(cat "$dir/haproxy.pid")
		kill -TERM "$pid"
		while alive "$dir/haproxy.pid"; do sleep 0.05; done
	fi
	export HAPROXY_BIND=127.0.0.1:$port HAPROXY_ADMIN_SOCKET=$dir/haproxy.sock
	"${HAPROXY:-haproxy}" -c -q -f "$dir/haproxy.cfg"
	# A log file per start: HAProxy writes over the start of a file it is
	# given to append to, and does not log requests into a pipe.
	log=$dir/haproxy-$(date +%H%M%S)-$mode.log
	"${HAPROXY:-haproxy}" -db -f "$dir/haproxy.cfg" >"$log" 2>&1 </dev/null &
	echo $! >"$dir/haproxy.pid"
	for _ in $(seq 1 100); do
		if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
			exec 3<&-
			echo "$log"
			return 0
		fi
		sleep 0.05
	done
	die "HAProxy does not listen on $port; see $log"
}

# down ends what the rig started: the pids it recorded, then anything still
# in its namespaces (workers), each by pid; then the namespaces go, and
# their veth pairs with them.
down() {
	local dir=$1 pid
	[ -f "$dir/id" ] || return 0
	for f in "$dir"/r*/pid "$dir/haproxy.pid"; do
		if alive "$f"; then
			kill -KILL "$(cat "$f")" 2>/dev/null || true
		fi
	done
	for n in $(seq 1 $replicas); do
		local ns
		ns=$(ns "$dir" "$n")
		ip netns list | grep -qw "$ns" || continue
		for pid in $(ip netns pids "$ns"); do
			kill -KILL "$pid" 2>/dev/null || true
		done
		ip netns del "$ns"
	done
	rm -f "$dir/id"
}

main() {
	[ $# -ge 2 ] || die "usage: rig.sh up|start|stop|kill|haproxy|addr|down DIR [N|MODE]"
	local cmd=$1 dir
	dir=$(realpath -m "$2")
	case $cmd in
	up) up "$dir" ;;
	start) start "$dir" "$3" ;;
	stop) stop "$dir" "$3" ;;
	kill) kill_replica "$dir" "$3" ;;
	haproxy) haproxy_start "$dir" "$3" ;;
	addr) addr "$dir" "$3" ;;
	down) down "$dir" ;;
	*) die "unknown command $cmd" ;;
	esac
}

main "$@"
