#!/bin/sh
# A Slurm cluster of one node on this machine, for the tests and the bench
# of tools/farm.sh: Debian's slurm-wlm and munge, with a munge key, a
# configuration, state, spool, logs and process ids of their own in DIR.
# Nothing under /etc is read or written; the daemons run as root.
#
#   slurm-local.sh install LOG   install slurm-wlm and munge (as root,
#                                tools/apt-install.sh) unless installed;
#                                fail, saying why, where it cannot
#   slurm-local.sh start DIR     start munged, slurmctld and slurmd and
#                                wait until the node takes jobs; then
#                                ". DIR/env" sets SLURM_CONF for sbatch
#   slurm-local.sh stop DIR      stop the daemons of DIR by their pids
#
# The node has the machine's cores; processes are tracked without cgroups
# (proctrack/linuxproc, task/none), which works in a container.  slurmd
# still starts its cgroup plugin: where /sys/fs/cgroup is cgroup2 it is
# told not to ask systemd (cgroup.conf in DIR), and system.slice is made
# there if missing (the one thing written outside DIR).
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "slurm-local: $*" >&2; exit 1; }

have_all() {
    for t in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
        command -v $t >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v $t >/dev/null 2>&1 ||
            { missing=$t; return 1; }
    done
}

cmd_install() {
    have_all && return 0
    [ "$(id -u)" = 0 ] || die "$missing is not installed and this is not root: install Debian's slurm-wlm and munge"
    command -v apt-get >/dev/null 2>&1 || die "$missing is not installed and there is no apt-get"
    sh "$top/tools/apt-install.sh" "$1" slurm-wlm munge
    have_all || die "$missing is still missing after installing slurm-wlm and munge (see $1)"
}

# free_port N: the first of N consecutive TCP ports that nothing listens on
free_port() {
    p=$((20000 + $$ % 20000))
    while [ $p -lt 65000 ]; do
        ok=1 i=0
        while [ $i -lt $1 ]; do
            hex=$(printf ':%04X ' $((p + i)))
            grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null && ok=0
            i=$((i + 1))
        done
        [ $ok = 1 ] && { echo $p; return; }
        p=$((p + $1))
    done
    die "no free TCP port"
}

write_conf() {
    d=$1 host=$(hostname -s) port=$(free_port 2)
    cat > "$d/slurm.conf" <<EOF
ClusterName=farmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=farm Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    # cgroup/v2 would ask systemd over D-Bus for a scope (see the top)
    printf 'IgnoreSystemd=yes\n' > "$d/cgroup.conf"
    [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ] ||
        mkdir -p /sys/fs/cgroup/system.slice 2>/dev/null || true
    echo "export SLURM_CONF=$d/slurm.conf PATH=\$PATH:/usr/sbin" > "$d/env"
}

# wait_for SECONDS CMD...: run CMD every half second until it succeeds
wait_for() {
    n=$(($1 * 2))
    shift
    while ! "$@" >/dev/null 2>&1; do
        n=$((n - 1))
        [ $n -gt 0 ] || return 1
        sleep 0.5
    done
}

node_idle() { sinfo -h -N -o %t | grep -qx idle; }

cmd_start() {
    mkdir -p "$1"
    d=$(cd "$1" && pwd)
    PATH=$PATH:/usr/sbin
    rm -rf "$d/state" "$d/spool" "$d/munge"
    mkdir -p "$d/state" "$d/spool" "$d/munge"
    chmod 700 "$d/munge"
    # the socket's path must fit a sockaddr_un
    sock=$d/munge/sock
    [ ${#sock} -lt 100 ] || sock=$(mktemp -d /tmp/munge.XXXXXX)/sock
    mungekey --create --force --keyfile="$d/munge/munge.key"
    munged --force --key-file="$d/munge/munge.key" --socket="$sock" \
        --pid-file="$d/munged.pid" --log-file="$d/munged.log" \
        --seed-file="$d/munge/seed" ||
        die "munged did not start: $(tail -n 1 "$d/munged.log")"
    write_conf "$d"
    export SLURM_CONF=$d/slurm.conf
    slurmctld -i || die "slurmctld did not start: $(tail -n 3 "$d/slurmctld.log")"
    slurmd -N "$(hostname -s)" || die "slurmd did not start: $(tail -n 3 "$d/slurmd.log")"
    wait_for 60 node_idle ||
        die "the node is not idle after 60 s: $(sinfo -N 2>&1 | tail -n 1); $(tail -n 2 "$d/slurmd.log")"
}

cmd_stop() {
    for p in slurmd slurmctld munged; do
        f=$1/$p.pid
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        wait_for 10 sh -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
}

case $1 in
install|start|stop) c=$1; shift; cmd_$c "$@" ;;
*) die "usage: slurm-local.sh install LOG | start DIR | stop DIR" ;;
esac
