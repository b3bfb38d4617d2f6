#!/usr/bin/env bash
# A single-node Slurm "cluster" on this machine, for testing the Slurm recipes.
#
#   recipes/slurm/local_cluster.sh up DIR       start munged, slurmctld and slurmd (installs Slurm
#                                               with apt-get when missing and we are root); prints
#                                               `export SLURM_CONF=DIR/slurm.conf` on stdout
#   recipes/slurm/local_cluster.sh status DIR   say whether it is up; sinfo and squeue when it is
#   recipes/slurm/local_cluster.sh down DIR     cancel its jobs, stop the daemons it started
#
# Everything lives under DIR: slurm.conf, the munge key, socket and logs, the controller's state,
# slurmd's spool, logs and pid files. The daemons are stopped by their pid files only. Clients must
# see SLURM_CONF=DIR/slurm.conf:  eval "$(recipes/slurm/local_cluster.sh up /tmp/cluster)"
#
# Environment: SLURM_PORT (default 16817): slurmctld listens there and slurmd on the next port;
# SLURM_PORT=auto: the first free pair from 16817 on (for `up`; the others read slurm.conf).
# The node has `nproc` CPUs and most of the memory; jobs may ask for 1 CPU each, so several run at
# once. Finished jobs stay visible to `scontrol show job` for an hour (MinJobAge=3600).
set -euo pipefail

die() { echo "local_cluster.sh: error: $*" >&2; exit 1; }
note() { echo "local_cluster.sh: $*" >&2; }

ACTION=${1:-}
DIR=${2:-}
case $ACTION in up|down|status) ;; *) die "usage: $0 up|down|status DIR";; esac
[ -n "$DIR" ] || die "usage: $0 $ACTION DIR"
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
PORT=${SLURM_PORT:-16817}
[[ $PORT =~ ^([0-9]+|auto)$ ]] || die "SLURM_PORT=$PORT: expected a port number or auto"
DAEMONS=(slurmd slurmctld munged)   # stop order

pidfile() {
    case $1 in
        munged) echo "$DIR/munge/munged.pid";;
        *) echo "$DIR/$1.pid";;
    esac
}

alive() {  # alive DAEMON: its pid file names a running process of that name
    local f pid
    f=$(pidfile "$1")
    [ -s "$f" ] || return 1
    pid=$(tr -dc 0-9 <"$f")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    # a stale pid file whose number was reused by another program does not count
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

stop() {  # stop DAEMON by its pid file
    local f pid i
    alive "$1" || { rm -f "$(pidfile "$1")"; return 0; }
    f=$(pidfile "$1")
    pid=$(tr -dc 0-9 <"$f")
    kill "$pid" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
        note "$1 ($pid) did not stop in 10 s; killing it"
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
    note "stopped $1 ($pid)"
}

is_up() { alive munged && alive slurmctld && alive slurmd; }

port_busy() {  # port_busy PORT: something listens on TCP PORT (from /proc/net/tcp*, no extra tools)
    local hex
    hex=$(printf '%04X' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" {f=1} END {exit !f}'
}

install_slurm() {
    local need=0 b
    for b in slurmctld slurmd sbatch squeue scontrol munged mungekey; do command -v "$b" >/dev/null 2>&1 || need=1; done
    [ "$need" = 1 ] || return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        die "Slurm is not installed (slurmctld, slurmd, sbatch, munged): install the Debian packages 'slurmctld slurmd slurm-client munge' (needs root and apt-get)"
    fi
    note "installing slurmctld slurmd slurm-client munge with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >"$DIR/apt.log" 2>&1 || {
        apt-get update -q >>"$DIR/apt.log" 2>&1 &&
        apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >>"$DIR/apt.log" 2>&1
    } || die "apt-get install slurmctld slurmd slurm-client munge failed (see $DIR/apt.log)"
    for b in slurmctld slurmd sbatch munged mungekey; do
        command -v "$b" >/dev/null 2>&1 || die "$b not found after installing Slurm (see $DIR/apt.log)"
    done
}

write_conf() {
    local host cpus mem_mb
    host=$(hostname -s)
    cpus=$(nproc)
    # memory jobs may ask for: the machine's, less 1 GiB (not enforced: CR_Core, no cgroups)
    mem_mb=$(awk '/^MemTotal:/ {m = int($2 / 1024) - 1024; print (m > 1024 ? m : 1024)}' /proc/meminfo)
    cat >"$CONF" <<EOF
# written by recipes/slurm/local_cluster.sh: a single-node test cluster under $DIR
ClusterName=ctxmtlocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket.2
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

up() {
    if is_up; then
        note "already up in $DIR"
        echo "export SLURM_CONF=$CONF"
        return 0
    fi
    install_slurm
    # a half-started cluster (one daemon died) is restarted from scratch
    local d
    for d in "${DAEMONS[@]}"; do stop "$d"; done
    if [ "$PORT" = auto ]; then
        PORT=16817
        while port_busy "$PORT" || port_busy $((PORT + 1)); do
            PORT=$((PORT + 2))
            [ "$PORT" -lt 16917 ] || die "no free pair of TCP ports in 16817-16918"
        done
    fi
    port_busy "$PORT" && die "TCP port $PORT is in use (another Slurm?); choose others with SLURM_PORT=..."
    port_busy $((PORT + 1)) && die "TCP port $((PORT + 1)) is in use (another Slurm?); choose others with SLURM_PORT=..."
    mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
    # munged wants every folder above its socket searchable by all, and the socket's own folder
    # writable by its owner only
    chmod a+x "$DIR"
    chmod 755 "$DIR/munge"
    local up=$DIR
    while up=$(dirname "$up"); [ "$up" != / ]; do
        [ $(( 0$(stat -c %a "$up") & 1 )) = 1 ] \
            || die "$up is not searchable by all (mode $(stat -c %a "$up")), which munged needs: choose another DIR, or chmod a+x $up"
    done
    write_conf
    [ -s "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null 2>&1 \
        || die "mungekey failed"
    chmod 600 "$DIR/munge/munge.key"
    munged --socket="$DIR/munge/munge.socket.2" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
        --seed-file="$DIR/munge/munged.seed" || die "munged did not start (see $DIR/munge/munged.log)"
    slurmctld -c || die "slurmctld did not start (see $DIR/log/slurmctld.log)"
    slurmd || die "slurmd did not start (see $DIR/log/slurmd.log)"
    local i state=
    for i in $(seq 60); do
        state=$(sinfo -h -o %t 2>/dev/null | head -n1 || true)
        [ "$state" = idle ] && break
        sleep 0.5
    done
    if [ "$state" != idle ]; then
        for d in "${DAEMONS[@]}"; do stop "$d"; done
        die "the node did not become idle in 30 s (state '${state:-?}'; see $DIR/log/)"
    fi
    note "up: $(hostname -s), $(nproc) CPUs, ports $PORT/$((PORT + 1)), in $DIR"
    echo "export SLURM_CONF=$CONF"
}

down() {
    if alive slurmctld && command -v squeue >/dev/null 2>&1; then
        local ids i
        ids=$(squeue -h -o %i 2>/dev/null || true)
        if [ -n "$ids" ]; then
            note "cancelling $(echo "$ids" | wc -l) job(s)"
            scancel $(squeue -h -o %F 2>/dev/null | sort -u) 2>/dev/null || true
            for i in $(seq 30); do [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break; sleep 0.5; done
        fi
    fi
    local d
    for d in "${DAEMONS[@]}"; do stop "$d"; done
    note "down ($DIR)"
}

status() {
    local d
    for d in munged slurmctld slurmd; do
        if alive "$d"; then echo "$d: running (pid $(tr -dc 0-9 <"$(pidfile "$d")"))"; else echo "$d: stopped"; fi
    done
    if is_up; then
        echo "export SLURM_CONF=$CONF"
        sinfo
        squeue
    else
        return 1
    fi
}

"$ACTION"
