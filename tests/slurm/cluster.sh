#!/usr/bin/env bash
# A private one-node Slurm cluster on loopback for the tests: Debian's slurm-wlm daemons
# (slurmctld, slurmd) and munged, with their own configuration, key, sockets, ports, state and
# logs under DIR, nothing in /etc touched, no other host contacted.
#   cluster.sh start DIR [task/none|task/affinity]   exit 77: the daemons cannot run here
#   cluster.sh stop DIR
# After start, DIR/env sets SLURM_CONF for sbatch, squeue, scontrol.
set -uo pipefail
cmd="${1:?usage: cluster.sh start|stop DIR [TASK_PLUGIN]}" dir="${2:?DIR}"
task_plugin="${3:-task/affinity}"

stop() {
  for d in slurmd slurmctld munged; do
    if [ -f "$dir/$d.pid" ]; then
      pid="$(cat "$dir/$d.pid")"
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
      rm -f "$dir/$d.pid"
    fi
  done
}
skip() { echo "SKIP: $*"; stop; exit 77; }

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: cluster.sh start|stop DIR"; exit 2; }

for exe in slurmctld slurmd munged sbatch scontrol sinfo; do
  command -v "$exe" >/dev/null || skip "$exe is not installed (Debian: apt install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs; not root here"

mkdir -p "$dir"/{state,spool,logs} && chmod 700 "$dir"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port="$(free_port)" slurmd_port="$(free_port)"
host="$(hostname -s)"
cpus="$(getconf _NPROCESSORS_ONLN)"  # not nproc: it obeys OMP_NUM_THREADS
mem_mb=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 / 2 ))

# munge: a private key and socket.
head -c 1024 /dev/urandom >"$dir/munge.key" && chmod 400 "$dir/munge.key"
munged --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/logs/munged.log" --seed-file="$dir/munge.seed" --force \
  >"$dir/logs/munged.out" 2>&1 || skip "munged does not start: $(tail -n 3 "$dir/logs/munged.out" "$dir/logs/munged.log" 2>/dev/null)"

cat >"$dir/slurm.conf" <<EOF
# Written by tests/slurm/cluster.sh: a one-node cluster on loopback for the mantissa tests.
ClusterName=mantissa-test
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire: also how long a requeued job waits before it may start again (default 120 s)
AuthInfo=socket=${dir}/munge.sock,cred_expire=10
CredType=cred/munge
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/logs/slurmctld.log
SlurmdLogFile=${dir}/logs/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=${task_plugin}
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
JobRequeue=1
KillWait=10
MinJobAge=600
SlurmdTimeout=60
InactiveLimit=0
SlurmdParameters=config_overrides
NodeName=${host} NodeAddr=127.0.0.1 NodeHostname=${host} CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN
PartitionName=test Nodes=${host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
echo "export SLURM_CONF=$dir/slurm.conf" >"$dir/env"
export SLURM_CONF="$dir/slurm.conf"

slurmctld -f "$SLURM_CONF" -i >"$dir/logs/slurmctld.out" 2>&1 ||
  skip "slurmctld does not start: $(tail -n 5 "$dir/logs/slurmctld.out" "$dir/logs/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" >"$dir/logs/slurmd.out" 2>&1 ||
  skip "slurmd does not start: $(tail -n 5 "$dir/logs/slurmd.out" "$dir/logs/slurmd.log" 2>/dev/null)"

# Ready when the node is idle.
for _ in $(seq 120); do
  state="$(sinfo -h -n "$host" -o %t 2>/dev/null | head -n1)"
  if [ "$state" = idle ]; then
    echo "cluster: $host idle ($cpus CPUs, $task_plugin, ports $ctld_port/$slurmd_port)"
    exit 0
  fi
  sleep 0.5
done
skip "the node did not become idle (state '${state:-none}'): $(tail -n 5 "$dir/logs/slurmctld.log" "$dir/logs/slurmd.log" 2>/dev/null)"
