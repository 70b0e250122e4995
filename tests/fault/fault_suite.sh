#!/usr/bin/env bash
# The fault-injection suite (issue 13): the real executable at 2 ranks on a tiny deck, through
# signals at random points of every phase (start-up, reference, variant, training, rollout,
# hybrid, report), kill -9, a SIGTERM to the launcher, concurrent runs into one directory, the
# --overwrite guard, names leaving the output directory, runaway decks, a moved run directory,
# a read-only and a full file system (tmpfs; skipped with a message where it cannot be mounted).
# Every trial ends in identical results after --resume (report.json accuracy and every dataset
# of report.h5 compared bit for bit with an uninterrupted run: fault_compare.py) or in a clear
# refusal with nothing lost; none may crash. Prints the fault matrix (trial kind x outcome).
#   fault_suite.sh "MPIRUN -np 2 ... MANTISSA" MANTISSA DECK OUT_DIR
# FAULT_SEED=n reproduces the random choices of a run; FAULT_TRIALS=n sets the number of
# random signal trials (default 6); FAULT_PHASES="training the surrogate" (a comma list of
# run.log phase lines) draws their phase from those only; FAULT_ONLY=signals runs those trials
# and nothing else (e.g. many signals in training against an ASan build). Every launch is
# bounded by FAULT_RUN_LIMIT seconds (default 240): one that does not end in time is killed and
# its trial fails as hung, naming it, instead of the whole suite running into ctest's timeout.
# Each trial's line is printed as it ends, with the seconds since the suite started.
set -uo pipefail
read -r -a mpi <<<"$1"
exe=$2 deck=$3 out=$4
here="$(cd "$(dirname "$0")" && pwd)"
py=/usr/bin/python3
seed=${FAULT_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
echo "fault suite: seed $seed (FAULT_SEED=$seed reproduces it)"
rm -rf "$out"
mkdir -p "$out"
declare -a matrix=()
failures=0
limit=${FAULT_RUN_LIMIT:-240}
note() {
  matrix+=("$(printf '%-34s %-10s %s' "$1" "$2" "$3")")
  printf '[%4ds] %-34s %-10s %s\n' "$SECONDS" "$1" "$2" "$3"
}
fail() {
  note "$1" FAIL "$2"
  failures=$((failures + 1))
  echo "FAIL: $1: $2"
  show_stacks
}

# The fault matrix, and the exit status: 1 when a trial failed.
summary() {
  echo
  echo "fault matrix (seed $seed):"
  printf '%s\n' "${matrix[@]}"
  if [ "$failures" -gt 0 ]; then
    echo "$failures trial(s) failed"
    exit 1
  fi
  echo "all trials passed"
  exit 0
}

# A launch, bounded: timeout(1) sends SIGTERM to the launcher (Open MPI's mpirun then kills the
# ranks) after $limit s, and SIGKILL 10 s later; exit 124 then means it hung (137, when even
# the SIGTERM did not end it, reads as a crash below).
launch() { timeout -k 10 "$limit" "${mpi[@]}" "$@"; }
run() { launch run "$deck" run.output_dir="$out" "$@"; }
hung() { [ "$1" -eq 124 ]; }

# A crash is an exit by a signal other than the stop path, or an abort: 134, 136, 139, ...
# (glibc says "corrupted ..." / "... corruption"; not "corrupt", which io's Open MPI fcoll
# warning contains)
crashed() { [ "$1" -ge 128 ] || grep -qiE "corrupted|corruption|double free|free\(\)|Segmentation|AddressSanitizer|runtime error|internal error" "$2"; }

compare() { $py "$here/fault_compare.py" "$1" "$out/base"; }

# A watchdog beside the trials: a mantissa rank of this suite alive for nearly $limit s is
# hanging; its threads' stacks go to $out/stacks/PID.txt (gdb, where ptrace is allowed)
# before timeout(1) ends it, and the hung trial's failure prints them.
mkdir -p "$out/stacks"
ours() {
  local p=$1 n
  for n in $(seq 1 12); do
    p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null) || return 1
    [ -z "$p" ] && return 1
    [ "$p" -eq "$$" ] && return 0
    [ "$p" -le 1 ] && return 1
  done
  return 1
}
watchdog() {
  local pid age
  while sleep 5; do
    for pid in $(pgrep -x mantissa); do
      [ -e "$out/stacks/$pid.txt" ] && continue
      age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')
      [ -n "$age" ] && [ "$age" -ge $((limit - 20)) ] && ours "$pid" || continue
      { echo "rank pid $pid, alive ${age} s: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
        timeout 15 gdb -batch -p "$pid" -ex "thread apply all bt 25" 2>&1 | grep -E '^(#|Thread)'; } >"$out/stacks/$pid.txt"
    done
  done
}
watchdog &
watchdog_pid=$!
trap 'kill "$watchdog_pid" 2>/dev/null' EXIT
# The stacks the watchdog took since the last call, for a hung trial's message.
show_stacks() {
  local f
  for f in "$out"/stacks/*.txt; do
    [ -e "$f" ] || continue
    sed 's/^/    /' "$f" | head -n 60
    mv "$f" "$f.shown"
  done
}

# The uninterrupted run every other trial is compared with.
if ! run run.name=base >"$out/base.log" 2>&1; then
  cat "$out/base.log"
  echo "FAIL: the uninterrupted run failed"
  show_stacks
  exit 1
fi
note "uninterrupted run" ok "the baseline"

# Waits until every rank has the stop handler installed (SigCgt holds SIGTERM, bit 15, and
# SIGUSR1, bit 10): from then on a signal is a stop request, not a kill.
# The mantissa ranks below a background job (the job is a subshell running timeout, mpirun
# and the ranks, possibly below a daemon): every descendant named mantissa.
ranks_of() {
  local c
  for c in $(pgrep -P "$1"); do
    if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = mantissa ]; then echo "$c"; else ranks_of "$c"; fi
  done
}
wait_handlers() {
  local p=$1 k pid mask ok
  for k in $(seq 1 400); do
    ok=0
    for pid in $(ranks_of "$p"); do
      mask=$(awk '/^SigCgt/ {print $2}' "/proc/$pid/status" 2>/dev/null)
      [ -n "$mask" ] && (((0x$mask & 0x4200) == 0x4200)) && ok=$((ok + 1))
    done
    [ "$ok" -ge 2 ] && return 0
    sleep 0.01
  done
  return 1
}

# resume_and_compare TRIAL NAME RC LOG [extra args]: after a stop (75) --resume must finish
# with the baseline's numbers; a run that finished (0) must have them already.
resume_and_compare() {
  local trial=$1 name=$2 rc=$3 log=$4
  shift 4
  if hung "$rc"; then
    fail "$trial" "hung: no exit within $limit s (killed); $(tail -n 2 "$log" | tr '\n' ' ')"
    return
  fi
  if crashed "$rc" "$log"; then
    fail "$trial" "crashed (exit $rc): $(grep -iE 'corrupted|corruption|free|Segm|Sanitizer|runtime error|internal' "$log" | head -2)"
    return
  fi
  local outcome
  if [ "$rc" -eq 75 ]; then
    if ! grep -qE "stopped (by|in phase|before phase)" "$log"; then fail "$trial" "exit 75 without saying it stopped"; return; fi
    run run.name="$name" "$@" --resume >"$log.resume" 2>&1
    local r2=$?
    if hung "$r2"; then
      fail "$trial" "--resume after the stop hung: no exit within $limit s"
      return
    fi
    if [ "$r2" -ne 0 ]; then fail "$trial" "--resume after the stop exited $r2: $(grep error "$log.resume" | head -1)"; return; fi
    outcome="stopped (75), resumed"
  elif [ "$rc" -eq 0 ]; then
    outcome="finished (0)"
  else
    fail "$trial" "exit $rc: $(grep error "$log" | head -1)"
    return
  fi
  local diff
  if ! diff=$(compare "$out/$name"); then fail "$trial" "$outcome but results differ: $diff"; return; fi
  note "$trial" ok "$outcome, results identical"
}

# 1. Signals at a random moment of a phase, to every rank (as Slurm does).
phases=("running reference" "running fp32" "training the surrogate" "running surrogate-fp32" "running hybrid-fp32")
[ -n "${FAULT_PHASES:-}" ] && IFS=, read -r -a phases <<<"$FAULT_PHASES"
# A phase's length in the uninterrupted run: from its run.log line to the line that ends it
# ("NAME: ok ..." or "surrogate ready"). The delay is drawn inside it, so the signal lands in
# the phase it names on a fast machine too (training took 0.24 s here, where a fixed 0-2 s
# delay put two thirds of the signals after the campaign's last phase).
span_of() {
  awk -v ph="$1" '
    function t(l,  s) { match(l, /\[ *[0-9.]+s\]/); s = substr(l, RSTART + 1, RLENGTH - 3); gsub(/ /, "", s); return s + 0 }
    !start && index($0, "[campaign] " ph) { start = t($0); next }
    start && /(: ok|surrogate ready|: failed|: diverged)/ { printf "%.3f", t($0) - start; exit }
  ' "$out/base/run.log"
}
trials=${FAULT_TRIALS:-6}
for i in $(seq 1 "$trials"); do
  sig=$([ $((RANDOM % 2)) -eq 0 ] && echo TERM || echo USR1)
  ph=${phases[$((RANDOM % ${#phases[@]}))]}
  span=$(span_of "$ph")
  if [ -n "$span" ]; then
    delay=$(awk -v s="$span" -v r="$RANDOM" 'BEGIN { printf "%.3f", s * r / 32768 }')
  else  # not in the uninterrupted run's log: anywhere in the second after its line
    delay=0.$((RANDOM % 10))$((RANDOM % 10))
  fi
  name=sig$i
  run run.name="$name" >"$out/$name.log" 2>&1 &
  p=$!
  for k in $(seq 1 600); do grep -q "$ph" "$out/$name/run.log" 2>/dev/null && break; sleep 0.01; done
  sleep "$delay"
  kill -"$sig" $(ranks_of "$p") 2>/dev/null
  wait "$p"
  resume_and_compare "SIG$sig in '${ph#running }' +${delay}s of ${span:-?}s" "$name" $? "$out/$name.log"
done

[ "${FAULT_ONLY:-}" = signals ] && summary

# 2. Start-up: a signal as soon as the handlers are installed (during MPI/Kokkos start-up or
# the deck checks), and at the raise points of the start-up, the set-up and the report.
for sig in TERM USR1; do
  name=boot$sig
  run run.name="$name" >"$out/$name.log" 2>&1 &
  p=$!
  wait_handlers "$p"
  kill -"$sig" $(ranks_of "$p") 2>/dev/null
  wait "$p"
  resume_and_compare "SIG$sig at process start" "$name" $? "$out/$name.log"
done
for at in startup setup report; do
  name=raise-$at
  MANTISSA_TEST_RAISE=$at run run.name="$name" >"$out/$name.log" 2>&1
  rc=$?
  if [ "$at" = report ] && [ "$rc" -eq 0 ] && ! grep -q "the report is complete" "$out/$name.log"; then
    fail "SIGTERM while the report is written" "exit 0 without saying the report is complete"
    continue
  fi
  if [ "$at" = startup ] && [ "$rc" -eq 75 ] && [ -e "$out/$name" ]; then
    fail "SIGTERM in start-up" "a stop before the run directory was touched left '$out/$name'"
    continue
  fi
  if [ "$at" = startup ] && [ "$rc" -eq 75 ]; then
    # Nothing was written: the same command (or --resume, which finds nothing) runs it.
    run run.name="$name" >"$out/$name.log.again" 2>&1
    r2=$?
    if [ "$r2" -ne 0 ]; then fail "SIGTERM in start-up" "the rerun exited $r2"; continue; fi
    if d=$(compare "$out/$name"); then note "SIGTERM in start-up" ok "stopped (75) before writing, rerun identical"; else fail "SIGTERM in start-up" "$d"; fi
    continue
  fi
  resume_and_compare "SIGTERM in $at" "$name" "$rc" "$out/$name.log"
done

# 3. kill -9 of every rank, then --resume (from the last checkpoint, or from the beginning
# when there is none yet: no circle between --resume and a plain run). The deck's defaults
# checkpoint at every phase end (checkpoint.phase_end) and every checkpoint.interval: a kill -9
# in training, and one at a random moment after the first checkpoint, resume from a checkpoint
# with the uninterrupted run's results.
kill9_after() {
  local trial=$1 name=$2 what=$3 delay=$4
  run run.name="$name" >"$out/$name.log" 2>&1 &
  local p=$! k
  for k in $(seq 1 1000); do
    [ -f "$out/$name/checkpoints/latest" ] && grep -q "$what" "$out/$name/run.log" 2>/dev/null && break
    sleep 0.01
  done
  sleep "$delay"
  kill -KILL $(ranks_of "$p") 2>/dev/null
  wait "$p"
  local r1=$?
  if [ "$r1" -eq 0 ]; then note "$trial" skip "the run finished before the kill"; return; fi
  if [ ! -f "$out/$name/checkpoints/latest" ]; then fail "$trial" "no checkpoint under the default deck"; return; fi
  run run.name="$name" --resume >"$out/$name.log.resume" 2>&1
  local rc=$? d=
  if ! grep -q "resuming from .*campaign-" "$out/$name.log.resume"; then
    fail "$trial" "--resume did not resume from a checkpoint (exit $rc): $(grep -E 'error|resum' "$out/$name.log.resume" | head -1)"
  elif [ "$rc" -eq 0 ] && d=$(compare "$out/$name"); then
    note "$trial" ok "--resume from $(grep -o 'resuming from [^ ]*' "$out/$name.log.resume" | sed 's|.*/||'), identical"
  else
    fail "$trial" "--resume exit $rc ${d:-}"
  fi
}
kill9_after "kill -9 in training (defaults)" kill9 "training the surrogate" 0
kill9_after "kill -9 after a checkpoint (defaults)" kill9rand "checkpoint .* written" "0.$((RANDOM % 10))$((RANDOM % 10))"
name=kill9early
run run.name="$name" >"$out/$name.log" 2>&1 &
p=$!
wait_handlers "$p"
kill -KILL $(ranks_of "$p") 2>/dev/null
wait "$p"
if [ -f "$out/$name/checkpoints/latest" ]; then
  note "kill -9 before the first checkpoint" skip "a checkpoint existed already"
else
  run run.name="$name" --resume >"$out/$name.log.resume" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && d=$(compare "$out/$name"); then
    note "kill -9 before the first checkpoint" ok "--resume started over, identical"
  else
    fail "kill -9 before the first checkpoint" "--resume exit $rc: $(grep error "$out/$name.log.resume" | head -1)"
  fi
fi

# 4. SIGTERM to the launcher (scripts/mantissa-mpirun turns it into a stop; plain Open MPI
# mpirun kills the ranks and exits 1, which is why the wrapper exists).
wrapper="$here/../../scripts/mantissa-mpirun"
name=launcher
mpirun_exe=${mpi[0]}
MPIRUN=$mpirun_exe "$wrapper" "${mpi[@]:1}" run "$deck" run.output_dir="$out" run.name=$name >"$out/$name.log" 2>&1 &
p=$!
for k in $(seq 1 600); do grep -q "running fp32" "$out/$name/run.log" 2>/dev/null && break; sleep 0.01; done
kill -TERM "$p"
wait "$p"
rc=$?
if [ "$rc" -ne 75 ]; then
  fail "SIGTERM to scripts/mantissa-mpirun" "exit $rc, expected 75"
else
  resume_and_compare "SIGTERM to scripts/mantissa-mpirun" "$name" "$rc" "$out/$name.log"
fi

# 5. Concurrent runs into one directory: a second run, --resume and --overwrite while the
# first runs are refused naming the holder, and the first finishes with the same numbers.
name=busy
run run.name="$name" >"$out/$name.log" 2>&1 &
p=$!
for k in $(seq 1 600); do grep -q "running fp32" "$out/$name/run.log" 2>/dev/null && break; sleep 0.01; done
# Frozen (SIGSTOP) while the others try: it holds the lock however slow their start-up is.
holders=$(ranks_of "$p")
kill -STOP $holders
for flag in "" --resume --overwrite; do
  trial="second run ${flag:-(plain)} while one runs"
  run run.name="$name" $flag >"$out/$name.second.log" 2>&1
  rc=$?
  if [ "$rc" -eq 1 ] && grep -q "in use by another mantissa run (host .*, pid [0-9]*, started " "$out/$name.second.log"; then
    note "$trial" ok "refused naming the holder"
  else
    fail "$trial" "exit $rc: $(grep -v Kokkos "$out/$name.second.log" | head -2)"
  fi
done
kill -CONT $holders
wait "$p"
rc=$?
if [ "$rc" -eq 0 ] && d=$(compare "$out/$name"); then note "the run that held the lock" ok "finished, identical"; else fail "the run that held the lock" "exit $rc ${d:-}"; fi

# 6. The --overwrite guard and names that leave the output directory.
mkdir -p "$out/sandbox" "$out/scratch/other" "$out/foreign"
echo precious >"$out/sandbox/keep.txt"
echo precious >"$out/foreign/thesis.tex"
launch run "$deck" run.output_dir="$out/scratch/other" run.name=../../sandbox --overwrite >"$out/escape.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "run.name" "$out/escape.log" && [ -f "$out/sandbox/keep.txt" ]; then
  note "run.name=../../sandbox --overwrite" ok "refused, the sandbox intact"
else
  fail "run.name=../../sandbox --overwrite" "exit $rc; sandbox $(ls "$out/sandbox" 2>&1)"
fi
run run.name=foreign --overwrite >"$out/foreign.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "not a mantissa run directory" "$out/foreign.log" && [ -f "$out/foreign/thesis.tex" ]; then
  note "--overwrite of a foreign directory" ok "refused, its files intact"
else
  fail "--overwrite of a foreign directory" "exit $rc"
fi

# 7. Runaway decks: refused by `check` and by `run` before allocating, naming the keys.
runaway() {
  local trial=$1 key=$2
  shift 2
  "$exe" check "$deck" "$@" >"$out/runaway.log" 2>&1
  local c=$?
  run run.name=runaway "$@" >>"$out/runaway.log" 2>&1
  local r=$?
  if [ "$r" -eq 1 ] && grep -q "$key" "$out/runaway.log" && ! grep -q "internal error" "$out/runaway.log" &&
    ! crashed "$r" "$out/runaway.log"; then
    note "$trial" ok "$([ "$c" -eq 1 ] && echo "check and run refuse" || echo "run refuses (check: steps unknown)")"
  else
    fail "$trial" "check $c, run $r: $(grep error "$out/runaway.log" | head -1)"
  fi
  rm -rf "$out/runaway"
}
runaway "mesh.n=[100000,100000]" "mesh.n" "mesh.n=[100000,100000]"
runaway "run.steps=2000000000" "run.steps" run.steps=2000000000
runaway "run.end_time=1e15" "run.end_time" run.end_time=1e15
runaway "run.end_time=1e30" "run.end_time" run.end_time=1e30

# 8. A moved run directory resumes (output_dir and name are not the deck's identity).
name=moved
run run.name="$name" campaign.stop_after_step=50 >"$out/$name.log" 2>&1
rc=$?
mkdir -p "$out/elsewhere"
mv "$out/$name" "$out/elsewhere/renamed"
launch run "$deck" run.output_dir="$out/elsewhere" run.name=renamed campaign.stop_after_step=50 --resume \
  >"$out/$name.log.resume" 2>&1
r2=$?
if [ "$rc" -eq 75 ] && [ "$r2" -eq 0 ] && d=$($py "$here/fault_compare.py" "$out/elsewhere/renamed" "$out/base"); then
  note "moved and renamed run directory" ok "--resume finished, identical"
else
  fail "moved and renamed run directory" "exit $rc then $r2: $(grep error "$out/$name.log.resume" | head -1) ${d:-}"
fi

# 8b. A resume refused for a deck change (issue 13 item 9): the refusal names the deck, and the
# run directory is as it was (deck.resolved.yaml byte for byte, the checkpoints); --resume with
# the run's own deck then finishes with the uninterrupted run's numbers.
name=deckchange
run run.name="$name" campaign.stop_after_step=50 >"$out/$name.log" 2>&1
rc=$?
cp "$out/$name/deck.resolved.yaml" "$out/$name.deck.before" 2>/dev/null
ls "$out/$name/checkpoints" >"$out/$name.ckpt.before" 2>/dev/null
run run.name="$name" campaign.stop_after_step=50 seismic.courant=0.45 --resume >"$out/$name.log.changed" 2>&1
r2=$?
deck_same=no ckpt_same=no
cmp -s "$out/$name.deck.before" "$out/$name/deck.resolved.yaml" && deck_same=yes
[ "$(ls "$out/$name/checkpoints")" = "$(cat "$out/$name.ckpt.before")" ] && ckpt_same=yes
run run.name="$name" campaign.stop_after_step=50 --resume >"$out/$name.log.resume" 2>&1
r3=$?
if crashed "$r2" "$out/$name.log.changed"; then
  fail "--resume with a changed deck" "crashed (exit $r2)"
elif [ "$rc" -ne 75 ] || [ "$r2" -eq 0 ] || [ "$r2" -eq 75 ]; then
  fail "--resume with a changed deck" "exit $rc, then $r2 for the changed deck (expected 75, then a refusal)"
elif ! grep -qi "deck" "$out/$name.log.changed"; then
  fail "--resume with a changed deck" "the refusal does not name the deck: $(grep -i error "$out/$name.log.changed" | head -1)"
elif [ "$deck_same" != yes ]; then
  fail "--resume with a changed deck" "deck.resolved.yaml was changed by the refused resume"
elif [ "$ckpt_same" != yes ]; then
  fail "--resume with a changed deck" "the refused resume changed the checkpoints"
elif [ "$r3" -ne 0 ] || ! d=$(compare "$out/$name"); then
  fail "--resume with a changed deck" "the resume with the run's own deck: exit $r3 ${d:-}"
else
  note "--resume with a changed deck" ok "refused, deck.resolved.yaml intact; resumed identical"
fi

# 9. A read-only and a full file system (tmpfs mounts need root and a kernel that allows them).
mnt="$out/mnt"
mkdir -p "$mnt"
if mount -t tmpfs -o size=1m,ro tmpfs "$mnt" 2>/dev/null; then
  launch run "$deck" run.output_dir="$mnt" run.name=ro >"$out/ro.log" 2>&1
  rc=$?
  umount "$mnt"
  if [ "$rc" -eq 1 ] && grep -qi "writable" "$out/ro.log" && ! grep -q "running reference" "$out/ro.log"; then
    note "read-only output directory" ok "refused before any work"
  else
    fail "read-only output directory" "exit $rc: $(grep error "$out/ro.log" | head -1)"
  fi
  mount -t tmpfs -o size=1m tmpfs "$mnt"
  launch run "$deck" run.output_dir="$mnt" run.name=full >"$out/full.log" 2>&1
  rc=$?
  umount "$mnt"
  if [ "$rc" -eq 1 ] && grep -q "free but the run writes up to" "$out/full.log" && ! grep -q "running reference" "$out/full.log"; then
    note "1 MiB file system (too small)" ok "refused at start-up naming the free space"
  else
    fail "1 MiB file system (too small)" "exit $rc: $(grep error "$out/full.log" | head -1)"
  fi
else
  echo "SKIP: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): no read-only / full disk trials"
  note "read-only / full file system" skip "tmpfs cannot be mounted here"
fi

summary
