#!/usr/bin/env bash
# An emulated two-tier cluster on one Linux machine, for trying FAST (and any
# MPI program) on a network with real NIC limits and real incast, without a
# cluster. Needs root, iproute2 (ip, tc), util-linux (unshare) and MPICH
# (ch4:ucx, hydra).
#
#   eval "$(tests/testbed/netcluster.sh up 4 2 200mbit 64k)"   # prints: export NESTFAST_TESTBED=DIR
#   tests/testbed/netcluster.sh run -- -n 8 nestfast a2a bench --workload hot:5 --sizes 4M:4M
#   tests/testbed/netcluster.sh down                          # DIR defaults to $NESTFAST_TESTBED
#
# up S M RATE BUFFER [MTU]
#   S servers (network namespaces), M ranks each. Every server has one NIC
#   (a veth pair to a Linux bridge, the switch, which lives in a namespace of
#   its own). Both directions of every NIC are shaped with tbf to RATE (tc
#   syntax: 200mbit, 1gbit): the server's egress is its uplink (deep host
#   queue), the switch port's egress is its downlink with a shallow BUFFER
#   (bytes, k/m suffixes: 64k), so many-to-one traffic overflows it and TCP pays
#   retransmits and 200 ms timeouts, as on a shallow-buffer switch. MTU
#   defaults to 9000. Names start with a fresh prefix (nf + 6 hex digits); the
#   state directory records everything up made, and down removes exactly that.
#   DIR/cluster.toml describes the testbed as a cluster preset (for jobs
#   whose plans are validated on it).
# run [--timeout SECONDS] -- MPIEXEC-ARGS...
#   Runs mpiexec (hydra) from the switch namespace with one hydra host per
#   server: each server's ranks run in its namespace with their own UTS and IPC
#   namespaces (own hostname), so UCX gives them shared memory inside a server
#   and TCP on the shaped NIC between servers (UCX_TLS=self,sm,tcp,
#   UCX_NET_DEVICES=nic0). Then prints, per server, the counters of this run:
#   downlink and uplink drops (tc), TCP segments retransmitted and TCP
#   retransmission timeouts (the server namespace's /proc/net), bytes carried.
#   The ranks get NESTFAST_NIC_GBPS (the NIC rate, RATE / 8 in GB/s) and
#   NESTFAST_NICS_PER_SERVER=1, which `nestfast a2a bench` reads as
#   --nic-GBps and --nics-per-server: the lower bound rests on the configured
#   rate, and FAST drives the one NIC from one rail. They also get
#   NESTFAST_FAST_CHUNK (default 16K, `a2a bench --fast-chunk`): FAST's rail
#   data in eager-sized messages, since UCX's TCP rendezvous serialises the
#   two directions of a swap. The counters also go to
#   DIR/last-run.json. The exit status is mpiexec's; past --timeout
#   (default 600 s) the run is stopped and the status is 124.
# counters
#   The cumulative counters, as run prints them.
# down
#   Ends any process left in the testbed's namespaces and deletes them.
#
# Facts behind the choices: shared/design/testbed-notes.md and docs/testbed.md.
set -euo pipefail

die() { echo "netcluster: $*" >&2; exit 1; }
state_root=${NESTFAST_TESTBED_ROOT:-/run/nestfast-testbed}

# "64k" -> 65536; "200mbit" -> 200000000 (bits/s, tc's decimal units).
bytes_of() {
  local text=$1
  case $text in
    *[kK]) echo $(( ${text%?} * 1024 )) ;;
    *[mM]) echo $(( ${text%?} * 1024 * 1024 )) ;;
    *) [[ $text =~ ^[0-9]+$ ]] || return 1; echo "$text" ;;
  esac
}
bits_of() {
  local text=${1,,}
  [[ $text =~ ^([0-9]+)(kbit|mbit|gbit|bit)?$ ]] || return 1
  local value=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]:-bit}
  case $unit in
    bit) echo "$value" ;;
    kbit) echo $(( value * 1000 )) ;;
    mbit) echo $(( value * 1000000 )) ;;
    gbit) echo $(( value * 1000000000 )) ;;
  esac
}

testbed_dir() {
  local dir=${NESTFAST_TESTBED:-}
  [ -n "$dir" ] || die "no testbed: set NESTFAST_TESTBED (up prints it)"
  [ -f "$dir/env" ] || die "$dir is not a testbed directory (no env file)"
  echo "$dir"
}

# Removes what the state directory says was made, newest first. Safe to call
# on a half-built testbed and twice.
teardown() {
  local dir=$1
  [ -f "$dir/made" ] || { rm -rf "$dir"; return 0; }
  local entries=()
  mapfile -t entries < "$dir/made"
  local i
  for ((i = ${#entries[@]} - 1; i >= 0; i--)); do
    local kind=${entries[i]%% *} name=${entries[i]#* }
    case $kind in
      netns)
        # Processes still inside are ones a run of this testbed started.
        local pids
        pids=$(ip netns pids "$name" 2> /dev/null || true)
        if [ -n "$pids" ]; then
          # shellcheck disable=SC2086
          kill -TERM $pids 2> /dev/null || true
          sleep 1
          pids=$(ip netns pids "$name" 2> /dev/null || true)
          # shellcheck disable=SC2086
          [ -z "$pids" ] || kill -KILL $pids 2> /dev/null || true
        fi
        ip netns del "$name" 2> /dev/null || true
        ;;
    esac
  done
  rm -rf "$dir"
}

record() { echo "$2 $3" >> "$1/made"; }

cmd_up() {
  [ $# -ge 4 ] && [ $# -le 5 ] || die "usage: up SERVERS RANKS-PER-SERVER RATE BUFFER [MTU]"
  local servers=$1 ranks=$2 rate=$3 buffer_text=$4 mtu=${5:-9000}
  [[ $servers =~ ^[0-9]+$ ]] && [ "$servers" -ge 2 ] && [ "$servers" -le 200 ] ||
    die "SERVERS '$servers' must be an integer from 2 to 200"
  [[ $ranks =~ ^[0-9]+$ ]] && [ "$ranks" -ge 1 ] || die "RANKS-PER-SERVER '$ranks' must be a positive integer"
  local rate_bits buffer
  rate_bits=$(bits_of "$rate") && [ "$rate_bits" -gt 0 ] || die "RATE '$rate' is not a tc rate like 200mbit"
  buffer=$(bytes_of "$buffer_text") && [ "$buffer" -ge 2048 ] || die "BUFFER '$buffer_text' is not a byte count >= 2048 (64k)"
  [[ $mtu =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 65000 ] || die "MTU '$mtu' must be 1280..65000"
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and tc)"
  for command in ip tc unshare mpiexec; do command -v "$command" > /dev/null || die "missing $command"; done

  local prefix dir
  prefix=nf$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  dir=$state_root/$prefix
  mkdir -p "$dir"
  : > "$dir/made"
  # Anything that fails from here on undoes what was made so far.
  trap 'teardown "$dir"' EXIT

  # The token bucket holds two frames: enough for line rate, and below 64 KiB
  # so that tbf cuts GSO super-packets into frames before the byte-limited queue.
  local burst=$(( 2 * (mtu + 100) ))
  local uplink_queue=$(( 4 * 1024 * 1024 ))  # the host side of a NIC: deep, never the incast point
  local host_queue=65536                      # tcp_limit_output_bytes (below)
  local switch=${prefix}sw
  ip netns add "$switch"
  record "$dir" netns "$switch"
  ip -n "$switch" link set lo up
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 mtu "$mtu"
  ip -n "$switch" addr add 10.77.0.254/24 dev br0
  ip -n "$switch" link set br0 up
  local hosts=() s
  for ((s = 0; s < servers; s++)); do
    local host=${prefix}s$s
    ip netns add "$host"
    record "$dir" netns "$host"
    ip -n "$host" link set lo up
    # A NIC's host queue is short: TCP may park 64 KiB per connection in it
    # (not the default 4 MiB, which queues a connection's data for 160 ms at
    # 200 Mbit/s and delays every small message behind it). A connection
    # that idles keeps its window, like an RDMA NIC's queue pair. A send
    # completes when it is on its way, as on a NIC, not when a 4 MiB socket
    # buffer took it: at most 256 KiB per connection. Measured with FAST
    # (a2a bench, fast's fraction of the bound): 8 x 1 at 100 Mbit/s zipf:0.8
    # 4 MiB: 0.55 default (a rank's stages all "completed" at once and shared
    # its uplink), 0.74 at 512 KiB, 0.86 at 256 KiB, 0.86 at 128 KiB; 4 x 2 at
    # 200 Mbit/s uniform 16 MiB: 0.91 default, 0.92 at 512 KiB, 0.88 at
    # 256 KiB, 0.70 at 128 KiB (on 2 loaded cores a rank is not always back
    # within the 5 ms that 128 KiB last).
    ip netns exec "$host" sysctl -qw net.ipv4.tcp_limit_output_bytes=$host_queue net.ipv4.tcp_slow_start_after_idle=0 \
      net.ipv4.tcp_wmem="4096 16384 262144"
    ip -n "$switch" link add "p$s" mtu "$mtu" type veth peer name nic0 mtu "$mtu" netns "$host"
    ip -n "$switch" link set "p$s" master br0
    ip -n "$switch" link set "p$s" up
    ip -n "$host" addr add "10.77.0.$((s + 1))/24" dev nic0
    ip -n "$host" link set nic0 up
    tc -n "$host" qdisc add dev nic0 root tbf rate "$rate_bits" burst "$burst" limit "$uplink_queue"
    tc -n "$switch" qdisc add dev "p$s" root tbf rate "$rate_bits" burst "$burst" limit "$buffer"
    hosts+=("$host:$ranks")
  done

  cat > "$dir/launch" <<EOF
#!/bin/sh
# hydra's ssh launcher for testbed $prefix: launch -x HOST COMMAND... runs
# COMMAND (as ssh would, through a shell) in HOST's network namespace, with
# its own UTS and IPC namespaces and HOST as hostname.
[ "\$1" = -x ] && shift
host=\$1
shift
case \$host in
  ${prefix}s[0-9]*) ;;
  *) echo "netcluster launcher: \$host is not a server of testbed $prefix" >&2; exit 1 ;;
esac
exec ip netns exec "\$host" unshare --uts --ipc -- /bin/sh -c 'hostname "\$0" && exec /bin/sh -c "\$1"' "\$host" "\$*"
EOF
  chmod +x "$dir/launch"
  local nic_gbps
  nic_gbps=$(awk -v b="$rate_bits" 'BEGIN { printf "%.9g", b / 8 / 1e9 }')
  cat > "$dir/env" <<EOF
PREFIX=$prefix
SERVERS=$servers
RANKS_PER_SERVER=$ranks
RATE_BITS=$rate_bits
BUFFER_BYTES=$buffer
MTU=$mtu
HOSTS=$(IFS=,; echo "${hosts[*]}")
NIC_GBPS=$nic_gbps
EOF
  # The testbed as a cluster preset (synthetic: it describes this emulation
  # only), so the solver's predictions can be set against what the testbed
  # measures. Per GPU, as presets are: a rank's share of its server's NIC.
  # Latency between servers: 100 us, the small-message figure of TCP over
  # veth on an idle link; since a stage ends with a synchronous send (the
  # last rail chunk is an MPI_Issend, comm/exec/fast_program.cpp) a stage
  # hands over on a drained NIC queue, and the 64 KiB host queue at RATE
  # (2.6 ms at 200 Mbit/s, 5.2 ms at 100 Mbit/s) that used to be added
  # overpriced both 4 x 2 and 8 x 1 on an idle machine (docs/testbed.md).
  # Efficiency: tbf meters whole Ethernet frames (MTU + 14 bytes) while a
  # frame carries MTU - 52 bytes of TCP payload (IPv4 20, TCP 20, the
  # timestamp option 12), so data moves at (MTU - 52) / (MTU + 14) of RATE,
  # 0.9927 at MTU 9000. The lower bound stays at RATE (the declared line rate).
  local gpu_gbps bridge_latency_us bridge_efficiency
  gpu_gbps=$(awk -v b="$rate_bits" -v m="$ranks" 'BEGIN { printf "%.9g", b / 8 / 1e9 / m }')
  bridge_latency_us=100
  bridge_efficiency=$(awk -v mtu="$mtu" 'BEGIN { printf "%.6f", (mtu - 52) / (mtu + 14) }')
  cat > "$dir/cluster.toml" <<EOF
# The emulated cluster of testbed $prefix (tests/testbed/netcluster.sh up $servers $ranks $rate $buffer_text $mtu).
# Synthetic: $servers network namespaces of $ranks ranks, one $rate NIC each (tbf both ways), a Linux
# bridge with $buffer bytes of buffer per port. Shared memory inside a server; the GPU is named only
# because a cluster needs one (nothing runs on it). Latencies: TCP over veth, measured small-message figures.
[cluster]
name = "testbed-${servers}x${ranks}-${rate}"
source = "tests/testbed/netcluster.sh: emulated, $servers servers x $ranks ranks, $rate NIC per server, $buffer_text switch buffer"
gpu = "h200"

[[cluster.level]]
name = "shared-memory"
group_size = $ranks
bandwidth_GBps = 2
latency_us = 5
oversubscription = 1

[[cluster.level]]
name = "bridge"
group_size = 0
bandwidth_GBps = $gpu_gbps
latency_us = $bridge_latency_us
oversubscription = 1
efficiency = $bridge_efficiency
efficiency_source = "computed: TCP payload (MTU $mtu - 52 header bytes) per Ethernet frame (MTU + 14) that tbf meters at $rate"
EOF
  trap - EXIT
  echo "export NESTFAST_TESTBED=$dir"
}

# One line per server: server downlink_drops uplink_drops retrans rtos down_bytes up_bytes
read_counters() {
  local dir=$1
  # shellcheck disable=SC1091
  . "$dir/env"
  local s
  for ((s = 0; s < SERVERS; s++)); do
    local host=${PREFIX}s$s
    local down up snmp netstat
    down=$(tc -s -n "${PREFIX}sw" qdisc show dev "p$s" | awk '/Sent/ { gsub(",", ""); print $2, $7; exit }')
    up=$(tc -s -n "$host" qdisc show dev nic0 | awk '/Sent/ { gsub(",", ""); print $2, $7; exit }')
    snmp=$(ip netns exec "$host" awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["RetransSegs"] }' /proc/net/snmp)
    netstat=$(ip netns exec "$host" awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["TCPTimeouts"] }' /proc/net/netstat)
    # down/up: "bytes dropped"
    echo "$s ${down#* } ${up#* } $snmp $netstat ${down%% *} ${up%% *}"
  done
}

print_counters() {
  local title=$1 json=$2
  shift 2
  echo "# testbed counters ($title), per server:"
  printf '# %-6s %12s %12s %12s %10s %14s %14s\n' server down_drops up_drops tcp_retrans tcp_rtos down_bytes up_bytes
  awk '{ printf "# %-6s %12s %12s %12s %10s %14s %14s\n", $1, $2, $3, $4, $5, $6, $7 }' <<< "$1"
  if [ -n "$json" ]; then
    awk 'BEGIN { printf "{\"servers\": [" }
         { printf "%s{\"server\": %d, \"down_drops\": %d, \"up_drops\": %d, \"tcp_retrans\": %d, \"tcp_rtos\": %d, \"down_bytes\": %d, \"up_bytes\": %d}", (NR > 1 ? ", " : ""), $1, $2, $3, $4, $5, $6, $7 }
         END { print "]}" }' <<< "$1" > "$json"
  fi
}

cmd_counters() {
  local dir
  dir=$(testbed_dir)
  print_counters "cumulative" "" "$(read_counters "$dir")"
}

cmd_run() {
  local timeout_s=600
  while [ $# -gt 0 ]; do
    case $1 in
      --timeout) timeout_s=$2; shift 2 ;;
      --) shift; break ;;
      *) die "usage: run [--timeout SECONDS] -- MPIEXEC-ARGS..." ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no mpiexec arguments after --"
  local dir
  dir=$(testbed_dir)
  # shellcheck disable=SC1091
  . "$dir/env"
  local before after rc=0
  before=$(read_counters "$dir")
  # The ranks reach each other through the NICs only: self and shared memory
  # inside a server, TCP on nic0 between servers.
  timeout --kill-after=10 "$timeout_s" ip netns exec "${PREFIX}sw" \
    env UCX_TLS=self,sm,tcp UCX_NET_DEVICES=nic0 NESTFAST_NIC_GBPS="$NIC_GBPS" NESTFAST_NICS_PER_SERVER=1 \
    NESTFAST_FAST_CHUNK="${NESTFAST_FAST_CHUNK:-16K}" \
    mpiexec -launcher ssh -launcher-exec "$dir/launch" -iface br0 -hosts "$HOSTS" "$@" || rc=$?
  after=$(read_counters "$dir")
  local delta
  delta=$(paste -d' ' <(echo "$before") <(echo "$after") |
    awk '{ n = NF / 2; printf "%s", $1; for (i = 2; i <= n; i++) printf " %d", $(i + n) - $i; print "" }')
  print_counters "this run" "$dir/last-run.json" "$delta"
  [ "$rc" -ne 124 ] || echo "netcluster: run stopped after ${timeout_s} s" >&2
  return "$rc"
}

cmd_down() {
  local dir
  dir=$(testbed_dir)
  teardown "$dir"
}

[ $# -ge 1 ] || die "usage: up S M RATE BUFFER [MTU] | run [--timeout S] -- ARGS... | counters | down"
command=$1
shift
case $command in
  up) cmd_up "$@" ;;
  run) cmd_run "$@" ;;
  counters) cmd_counters "$@" ;;
  down) cmd_down "$@" ;;
  *) die "unknown command '$command' (up, run, counters, down)" ;;
esac
