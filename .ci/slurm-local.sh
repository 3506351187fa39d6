#!/usr/bin/env bash
# A one-node SLURM cluster on localhost, for testing profiles/slurm for real
# (tests/pipeline/test_slurm.py). Debian packages slurm-wlm + munge; no systemd, no slurmdbd.
#
#   .ci/slurm-local.sh start   # install if missing, write the config, start the daemons
#   .ci/slurm-local.sh stop    # stop the daemons this script started (by their pid files)
#
# Everything lives in $PFRESAMPLE_SLURM_DIR (default /tmp/pfresample-slurm): the
# config, the munge socket, spool, logs and pid files. The one path outside it is
# /etc/slurm/slurm.conf, a symlink to our config: the SLURM executor's job step strips
# SLURM_CONF from the environment of its inner srun, so the config must be at the
# default path. An existing slurm.conf that is not ours is never replaced.
# Needs root (apt-get, and the daemons switch to the munge and slurm users).
set -euo pipefail

DIR=${PFRESAMPLE_SLURM_DIR:-/tmp/pfresample-slurm}
CTLD_PORT=${PFRESAMPLE_SLURMCTLD_PORT:-6817}
SLURMD_PORT=${PFRESAMPLE_SLURMD_PORT:-6818}
PARTITION=${PFRESAMPLE_SLURM_PARTITION:-debug}
CONF=$DIR/slurm.conf
SOCKET=$DIR/munge/munge.socket
SYSCONF=/etc/slurm/slurm.conf

die() { echo "slurm-local: $*" >&2; exit 1; }

install_packages() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v munged >/dev/null && command -v sinfo >/dev/null && return 0
    [ "$(id -u)" = 0 ] || die "slurm-wlm/munge not installed and not root: cannot install"
    command -v apt-get >/dev/null || die "slurm-wlm/munge not installed and no apt-get"
    echo "slurm-local: installing slurm-wlm munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_config() {
    local host cpus mem
    host=$(hostname -s)
    cpus=$(nproc)
    # Below the machine's memory, so slurmd does not drain the node for having less.
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
    # cgroups are not usable in containers: linuxproc tracking, no task plugin.
    # Without slurmdbd, sacct does not work; the profile polls squeue instead, which
    # forgets a finished job after MinJobAge seconds (the plugin wants >= 3x its
    # first-poll delay).
    cat >"$CONF" <<EOF
ClusterName=pfresample-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
MinJobAge=300
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
    install_packages
    if running "$DIR/slurmctld.pid" && running "$DIR/slurmd.pid" && running "$DIR/munged.pid"; then
        echo "slurm-local: already running ($DIR)"
    else
        # munged and slurmctld run as their own users: they must reach $DIR.
        mkdir -p "$DIR"/{munge,state,spool,log}
        chmod 0755 "$DIR"
        chown munge:munge "$DIR/munge"
        chmod 0755 "$DIR/munge"  # munged insists clients can reach the socket
        chown slurm:slurm "$DIR/state" "$DIR/log"
        [ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
        write_config
        if [ -e "$SYSCONF" ] || [ -L "$SYSCONF" ]; then
            [ "$(readlink "$SYSCONF")" = "$CONF" ] \
                || die "$SYSCONF exists and is not ours: a SLURM is configured here already"
        else
            mkdir -p "$(dirname "$SYSCONF")"
            ln -s "$CONF" "$SYSCONF"
        fi
        runuser -u munge -- munged --socket="$SOCKET" --pid-file="$DIR/munge/munged.pid" \
            --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
        cp "$DIR/munge/munged.pid" "$DIR/munged.pid"
        # slurmctld starts as root and switches to SlurmUser; slurmd stays root (it
        # starts jobs as their owner). Both daemonize and write their pid files.
        slurmctld -f "$CONF"
        slurmd -f "$CONF"
    fi
    # The node registers within seconds; a config the daemons reject shows in the logs.
    local state=""
    for _ in $(seq 60); do
        state=$(sinfo -h -o %T 2>/dev/null | head -n1 || true)
        [ "$state" = idle ] && { echo "slurm-local: node idle ($DIR)"; return 0; }
        sleep 1
    done
    tail -n 20 "$DIR"/log/*.log >&2 || true
    die "node not idle after 60 s (state '${state:-none}'); logs in $DIR/log"
}

stop() {
    # Only the daemons started here, by the pids they recorded; munge last (slurm needs it).
    local name pid
    for name in slurmd slurmctld munged; do
        [ -s "$DIR/$name.pid" ] || continue
        pid=$(cat "$DIR/$name.pid")
        if kill "$pid" 2>/dev/null; then
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
        rm -f "$DIR/$name.pid"
    done
    [ "$(readlink "$SYSCONF" 2>/dev/null)" = "$CONF" ] && rm -f "$SYSCONF"
    echo "slurm-local: stopped ($DIR)"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) die "usage: $0 start|stop" ;;
esac
