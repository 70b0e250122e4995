#!/usr/bin/env bash
# scripts/slurm/campaign.sbatch under a real Slurm controller (tests/slurm/cluster.sh: Debian's
# slurmctld + slurmd + munged on loopback, started and stopped here), on tests/slurm/small.yaml:
#   - an uninterrupted job (the reference report), ranks bound to distinct CPUs;
#   - SIGUSR1 to the batch shell (what --signal=B:USR1@120 does) while a given phase runs:
#     checkpoint, exit 75, requeue, resumed part, report equal to the uninterrupted one, both
#     parts in the one output file;
#   - SIGUSR1 as soon as the job starts; a resubmission of a stopped run (resumes) and of a
#     finished one (does nothing).
# usage: run_slurm_test.sh MANTISSA SOURCE_DIR WORK_DIR TASK_PLUGIN [CASE ...]
#   CASE: plain, phases, start, resubmit (default: all, in that order; plain first: the others
#   compare their reports with its)
# Exit 77 (ctest: skipped) only when the daemons cannot start here.
set -uo pipefail
exe="$1" src="$2" work="$3" task_plugin="$4"
shift 4
cases=("$@")
[ "${#cases[@]}" -gt 0 ] || cases=(plain phases start resubmit)
# The phases a stop is requested in (MANTISSA_TEST_HOLD), in campaign order; tests/regression/
# campaign stops at random steps of every phase.
phase_texts=(reference training@15 surrogate-fp32 hybrid-fp32)  # training@15: after optimizer step 15 of 30
deck="$src/tests/slurm/small.yaml"
sbatch_script="$src/scripts/slurm/campaign.sbatch"
check_report="$src/tests/regression/campaign/check_report.py"
py=/usr/bin/python3; [ -x "$py" ] || py=python3
cluster="$work/cluster"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

bash "$src/tests/slurm/cluster.sh" start "$cluster" "$task_plugin"
rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "FAIL: cluster start ($rc)"; exit 1; }
cleanup() {
  scancel --quiet --full "${jobs[@]}" 2>/dev/null
  bash "$src/tests/slurm/cluster.sh" stop "$cluster"
}
jobs=()
trap cleanup EXIT
. "$cluster/env"
export MANTISSA="$exe" OMPI_MCA_rmaps_base_oversubscribe=1
unset OMP_PROC_BIND OMP_PLACES

pass=0 fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/  | /' "$2" | tail -n 40; fail=$((fail + 1)); }

submit() {  # submit NAME [key=value ...]: job id
  local id name="$1"
  shift
  id="$(sbatch --parsable --export=ALL --job-name="$name" --output="$work/$name-%j.out" \
        "$sbatch_script" "$deck" run.output_dir="$work/runs" run.name="$name" "$@")" || return 1
  jobs+=("$id")
  echo "$id"
}
cnt() { local n; n="$(grep -c -- "$1" "$2" 2>/dev/null)"; echo "${n:-0}"; }  # cnt PATTERN FILE
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
wait_state() {  # wait_state JOB STATE... [limit s]: until the job is in one of the states
  local id="$1" t0=$SECONDS s
  shift
  while [ $((SECONDS - t0)) -lt 600 ]; do
    s="$(job_field "$id" JobState)"
    if [ "$s" = PENDING ] && [ "$(job_field "$id" Reason)" = PartitionConfig ]; then
      echo "  job $id can never start here (Reason=PartitionConfig: it asks more than the node has)"
      return 1
    fi
    for want in "$@"; do [ "$s" = "$want" ] && return 0; done
    case "$s" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) return 1 ;; esac
    sleep 0.2
  done
  echo "  (timed out in state $s)"
  return 1
}
finished_ok() {  # finished_ok JOB OUT RUN [fresh]: completed, exit 0, report equal to the plain one
  local id="$1" out="$2" run="$3" fresh="${4:-}" chk
  wait_state "$id" COMPLETED || { echo "  job $id ended $(job_field "$id" JobState) $(job_field "$id" ExitCode)"; return 1; }
  [ -f "$run/report.json" ] || { echo "  no report in $run"; return 1; }
  if [ "$run" != "$work/runs/plain" ]; then
    chk="$work/check-$(basename "$run").txt"
    "$py" "$check_report" "$run" --against "$work/runs/plain" >"$chk" 2>&1
    local crc=$?
    if [ "$fresh" = fresh ]; then
      # never resumed (stopped before it started): equal numbers, and the report says so
      if grep "FAIL" "$chk" | grep -v -q "the resumed run says it was resumed" ||
         ! grep -q '"resumed": false' "$run/report.json"; then
        echo "  report differs from the uninterrupted one:"; tail -n 20 "$chk"; return 1
      fi
    elif [ "$crc" != 0 ]; then
      echo "  report differs from the uninterrupted one:"; tail -n 20 "$chk"; return 1
    fi
  fi
  return 0
}
stopped_and_resumed() {  # the output file has all parts: the stop, the requeue, the resumed end
  local out="$1"
  grep -q "stopped with a checkpoint; requeueing" "$out" && grep -q "part 1 " "$out" && grep -q "part 2 " "$out" &&
    grep -q "running: .* --resume" "$out" && [ "$(tail -n 1 "$out")" = "mantissa-job: exit 0" ]
}

for c in "${cases[@]}"; do
  case "$c" in
    plain)
      id="$(submit plain)" || { bad "sbatch plain"; continue; }
      out="$work/plain-$id.out"
      if finished_ok "$id" "$out" "$work/runs/plain"; then ok "uninterrupted job $id: report written"
      else bad "uninterrupted job $id" "$out"; continue; fi
      # Ranks on distinct CPUs (bound) and a launcher that starts Debian's Open MPI.
      cpus="$(sed -n 's/^mantissa-job: rank [0-9]* CPUs //p' "$out" | sort)"
      n="$(wc -l <<<"$cpus")"; u="$(sort -u <<<"$cpus" | wc -l)"
      if grep -q "ranks bound: yes" "$out" && [ "$n" = 2 ] && [ "$u" = 2 ] && ! grep -q "OMP_PROC_BIND=spread" "$out"; then
        ok "$task_plugin: 2 ranks bound to distinct CPUs ($(tr '\n' ' ' <<<"$cpus")); $(grep -o 'launcher: [^;]*' "$out")"
      elif grep -q "ranks bound: no" "$out" && grep -q "OMP_PROC_BIND=false" "$out"; then
        ok "$task_plugin: ranks not bound, threads left unpinned; $(grep -o 'launcher: [^;]*' "$out")"
      else bad "$task_plugin: binding" "$out"; fi
      ;;
    phases)
      # One job, stopped at several phases: MANTISSA_TEST_HOLD holds each listed phase at its
      # start (training: after its optimizer step 15) until a signal has come (the phases last
      # milliseconds here, too short to aim a signal at from outside). Every stop is a
      # checkpoint, exit 75 and a requeue; every part after the first resumes; the last part
      # ends the campaign. A part that resumes in a phase does not hold there, so the holds come
      # deterministically in this order: reference (part 1); training@15 (part 2: training stops
      # part-way, part 3 continues it from step 15); surrogate-fp32 (part 3); hybrid-fp32
      # (part 4); part 5 finishes.
      want_holds="reference training@15 surrogate-fp32 hybrid-fp32"
      id="$(MANTISSA_TEST_HOLD="$(tr ' ' , <<<"${phase_texts[*]}")" submit phases)" || { bad "sbatch phases"; continue; }
      out="$work/phases-$id.out" log="$work/runs/phases/run.log"
      k=0 base=0 holds=() where=() t0=$SECONDS
      while [ $((SECONDS - t0)) -lt 900 ]; do
        s="$(job_field "$id" JobState)"
        case "$s" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
        hold="$(tail -n +$((base + 1)) "$log" 2>/dev/null | sed -n "s/.*test hold at '\([^']*\)'.*/\1/p" | head -n1)"
        if [ -z "$hold" ]; then sleep 0.1; continue; fi
        k=$((k + 1))
        scancel --signal=USR1 --batch "$id"
        until [ "$(cnt "requeueing" "$out")" -ge "$k" ] || [ $((SECONDS - t0)) -gt 900 ]; do sleep 0.2; done
        until [ "$(job_field "$id" JobState)" != RUNNING ] || [ $((SECONDS - t0)) -gt 900 ]; do sleep 0.2; done
        base="$(wc -l <"$log")"
        holds+=("$hold")
        where+=("$(grep "checkpoint .* written (phase" "$log" | tail -n 1 | sed -n "s/.*(phase '\([^']*\)', step \([0-9]*\)).*/\1 step \2/p")")
      done
      if finished_ok "$id" "$out" "$work/runs/phases" && stopped_and_resumed "$out" &&
         [ "${holds[*]}" = "$want_holds" ] && [ "$(cnt "requeueing" "$out")" = "$k" ] &&
         grep -q "training continues after optimizer step 15 " "$log" &&
         [ "$(job_field "$id" Restarts)" = "$k" ]; then
        ok "USR1 at $k phases of one job: each a checkpoint, exit 75, requeue; $(job_field "$id" Restarts) resumed parts in one output file; report equal to the uninterrupted one"
        for i in "${!holds[@]}"; do
          echo "      signal at '${holds[$i]}' -> checkpoint in ${where[$i]:-?}"
        done
      else bad "USR1 at each phase (held at: ${holds[*]:-none}; expected: $want_holds)" "$out"; fi
      ;;
    start)
      id="$(submit start)" || { bad "sbatch start"; continue; }
      out="$work/start-$id.out"
      wait_state "$id" RUNNING
      # RUNNING is reported before the batch shell has read its first line; a signal in those
      # first milliseconds kills any bash script (its trap is not set yet). The script's first
      # act is the trap, its second the "part 1" line: signal right after that line.
      t0=$SECONDS
      until grep -q "mantissa-job: job .* part 1" "$out" 2>/dev/null || [ $((SECONDS - t0)) -ge 60 ]; do sleep 0.05; done
      scancel --signal=USR1 --batch "$id"
      if finished_ok "$id" "$out" "$work/runs/start" fresh && [ "$(job_field "$id" ExitCode)" = "0:0" ] &&
         grep -q "SIGUSR1 received" "$out"; then
        ok "USR1 at the start of the job survived, run completed ($(grep -c 'mantissa-job: job .* part ' "$out") parts)"
      else bad "USR1 at the start" "$out"; fi
      ;;
    resubmit)
      # A run stopped outside the job (its checkpoint left behind): a new sbatch resumes it. One
      # thread per rank like the jobs: the energy sums are reduced in thread order.
      mkdir -p "$work/runs"
      ( cd "$work" && OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 "$exe" run "$deck" \
          run.output_dir="$work/runs" run.name=resub campaign.stop_after_step=40 ) >"$work/resub-first.txt" 2>&1
      first=$?
      id="$(submit resub campaign.stop_after_step=40)" || { bad "sbatch resub"; continue; }
      out="$work/resub-$id.out"
      if [ "$first" = 75 ] && finished_ok "$id" "$out" "$work/runs/resub" && grep -q "running: .* --resume" "$out"; then
        ok "resubmission of a stopped run resumes it (same report)"
      else bad "resubmission of a stopped run (first part exit $first)" "$out"; fi
      id="$(submit plain)" || { bad "sbatch plain again"; continue; }
      out="$work/plain-$id.out"
      if wait_state "$id" COMPLETED && grep -q "already has its report; nothing to do" "$out"; then
        ok "resubmission of a finished run does nothing, exit 0"
      else bad "resubmission of a finished run" "$out"; fi
      ;;
  esac
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
