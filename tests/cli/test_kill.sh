#!/usr/bin/env bash
# Fault test: kill `dpdyn simulate` and `dpdyn compare` (model linreg) while they write their
# output, with SIGINT, SIGTERM and SIGKILL, into an --out directory that already holds a
# complete OLD result (same command, another seed). After every kill the directory must hold
# the complete OLD result or the complete NEW one, never a mix: the same file names as the
# reference runs, every file equal byte for byte to the old or to the new reference (less the
# lines naming `out` and the wall time), all from the same side. SIGINT/SIGTERM: exit 130/143,
# one line on stderr, no staging directory `.<base>.dpdyn-*` left beside --out, no temporary in
# it, no gnuplot left running. SIGKILL: exit 137; it may leave a staging directory, which the
# next run into the same parent directory must remove.
#
# When: a python3 poller (os.scandir every ~0.1 ms; spawning ls is too slow) sends the signal
#   stage+F   F x W after the staging directory appears, W = the measured time from the staging
#             directory to the publication of a run that is not killed (F = 0: at the first
#             file; larger F: while the files are written; compare: while gnuplot renders)
#   file:N    as soon as the file N appears in the staging directory, or the directory has gone
#             (N = .dpdyn: the marker written right before the exchange, which runs with
#             SIGINT/SIGTERM/SIGHUP blocked; compare.gp: gnuplot is about to start)
#   publish   as soon as --out is a new directory (between the exchange and the exit)
# A signal sent after the process had already finished (exit 0) is a miss: counted apart and
# retried (stage+F with half the delay), never counted as a kill. Each signal needs >= 6 kills,
# at least one of which left the old result (and, for SIGKILL, one a staging directory), or the
# kills did not hit the window.
#
# usage: test_kill.sh DPDYN_BINARY SOURCE_DIR
# env:   DPD_KILL_ROUNDS  kill slots per command and signal, 3..8 (default 5: 10 kills a signal)
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
rounds=${DPD_KILL_ROUNDS:-5}
[ "$rounds" -ge 3 ] 2>/dev/null || rounds=3
[ "$rounds" -le 8 ] || rounds=8
tries=4 # attempts of one slot (a miss retries it; stage+F with half the delay)
shopt -s nullglob

fail() { bad "$@"; }

# the interpreter itself, not a wrapper (a pyenv shim costs up to a second a start)
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -z "$py" ]; then
  echo "FAIL python3 is needed to time the kills"
  echo "kill: 0 passed, 1 failed"
  exit 1
fi

# ---- the poller ----
# usage: kill_at.py REF_OLD REF_NEW PARENT SIG MODE ARG STDOUT STDERR -- COMMAND...
# Copies REF_OLD to PARENT/out, runs COMMAND, sends signal SIG (0: none) at the moment MODE ARG,
# waits for the exit (120 s at most), then compares PARENT/out with REF_OLD and REF_NEW.
# prints: RC SENT PID WINDOW SIDE
#   RC 128 + signal for a killed process (like bash), "hang" past 120 s; SENT 1 if the signal
#   was sent while the process ran; WINDOW (mode measure) staging directory -> publication, s;
#   SIDE old, new, or "bad: why"
cat >"$work/kill_at.py" <<'EOF'
import os, re, shutil, subprocess, sys, time
ref_old, ref_new, parent, sig, mode, arg, out_path, err_path = sys.argv[1:9]
cmd = sys.argv[10:]
sig = int(sig)
out = os.path.join(parent, 'out')
prefix = '.out.dpdyn-'
os.makedirs(parent, exist_ok=True)
shutil.copytree(ref_old, out)
ino0 = os.stat(out).st_ino
limit = time.monotonic() + 120.0  # no wait is unbounded
with open(out_path, 'wb') as so, open(err_path, 'wb') as se:
    p = subprocess.Popen(cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL)

def alive():  # polled every ~0.1 ms: fast enough, and leaves the cores to dpdyn
    time.sleep(0.0001)
    return p.poll() is None and time.monotonic() < limit

def find_stage():
    while alive():
        with os.scandir(parent) as it:
            for e in it:
                if e.name.startswith(prefix):
                    return e.path
    return None

def published():
    try:
        return os.stat(out).st_ino != ino0
    except FileNotFoundError:
        return False

def send():
    if p.poll() is None:  # a process that ends meanwhile is a zombie: the signal does nothing
        os.kill(p.pid, sig)
        return 1
    return 0

sent = 0
window = -1.0
if mode == 'measure':
    find_stage()
    t0 = time.monotonic()
    while alive() and not published():
        pass
    if published():
        window = time.monotonic() - t0
elif mode == 'stage':
    if find_stage() is not None:
        if float(arg) > 0:
            time.sleep(float(arg))
        sent = send()
elif mode == 'file':
    stage = find_stage()
    if stage is not None:
        path = os.path.join(stage, arg)
        while alive():
            if os.path.exists(path) or not os.path.isdir(stage):
                sent = send()
                break
elif mode == 'publish':
    while alive():
        if published():
            sent = send()
            break
try:
    rc = p.wait(timeout=max(1.0, limit - time.monotonic()))
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    print('hang %d %d -1 bad: no exit within 120 s' % (sent, p.pid))
    sys.exit(0)
if rc < 0:
    rc = 128 - rc

def norm(path):  # the content less the lines naming the directory or the clock
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith('.json'):
        drop = re.compile(rb'^\s*"(out|wall_seconds)":')
    elif path.endswith('.tsv'):
        drop = re.compile(rb'^# out = ')
    else:
        return data
    return b''.join(l for l in data.splitlines(True) if not drop.match(l))

def classify():
    if not os.path.isdir(out):
        return 'bad: --out is gone'
    names, want = sorted(os.listdir(out)), sorted(os.listdir(ref_new))
    if names != want:
        return 'bad: files %s (want %s)' % (' '.join(names), ' '.join(want))
    side = None
    for f in names:
        path = os.path.join(out, f)
        if f == '.dpdyn':  # "dpdyn VERSION output, written by process PID"
            with open(path, 'rb') as fh:
                text = fh.read()
            with open(os.path.join(ref_old, f), 'rb') as fh:
                old = fh.read()
            s = 'old' if text == old else 'new' if text.endswith(b' %d\n' % p.pid) else None
        else:
            mine = norm(path)
            o = mine == norm(os.path.join(ref_old, f))
            n = mine == norm(os.path.join(ref_new, f))
            if o and n:
                continue  # the same in both (compare.gp)
            s = 'old' if o else 'new' if n else None
        if s is None:
            return 'bad: %s is neither the old nor the new one' % f
        if side is not None and s != side:
            return 'bad: a mix (%s is %s, an earlier file %s)' % (f, s, side)
        side = s
    return side or 'bad: no file tells old from new'

print('%d %d %d %.6f %s' % (rc, sent, p.pid, window, classify()))
EOF

# ---- reference runs: OLD (seed 1) and NEW (seed 2), each into its own directory ----
# The compute takes well under 0.3 s; the output is large-ish: 20001 rows of trajectory.tsv
# (simulate), 5001 for compare, whose window is mostly gnuplot rendering the figure.
declare -A params=([simulate]="--d=50 --n=200 --seeds=2 --grid=20001"
  [compare]="--d=50 --n=200 --seeds=2 --grid=5001")
run_args() { # run_args CMD SEED DIR: the command line of a run into DIR
  local p
  read -r -a p <<<"${params[$1]}"
  args=("$dpdyn" "$1" "${p[@]}" --seed="$2" --out="$3")
}
for cmd in simulate compare; do
  for seed in 1 2; do
    d="$work/ref/$cmd-$seed"
    run_args "$cmd" "$seed" "$d"
    if ! timeout 300 "${args[@]}" >/dev/null 2>"$work/stderr"; then
      fail "reference run $cmd --seed=$seed: $(head -c 300 "$work/stderr")"
      echo "kill: $passes passed, $fails failed"
      exit 1
    fi
  done
done
[ -f "$work/ref/compare-2/compare.png" ] || fail "reference run compare: no compare.png"

# wait_gone DIR SECONDS: waits until no process names DIR/ in its command line (a gnuplot)
wait_gone() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do
    pgrep -f -- "$1/" >/dev/null || return 0
    sleep 0.05
  done
  return 1
}

declare -A kills olds news misses left window
trial=0

# run_trial CMD SIG MODE ARG: one attempt; sets $outcome to hit, miss or fail
run_trial() {
  local cmd=$1 sig=$2 mode=$3 arg=$4 signum sep=+
  case $sig in INT) signum=2 ;; TERM) signum=15 ;; KILL) signum=9 ;; esac
  [ "$mode" = file ] && sep=:
  trial=$((trial + 1))
  local parent="$work/t$trial"
  local dir="$parent/out" what="$cmd SIG$sig at $mode${arg:+$sep$arg}"
  local res rc sent w side args
  run_args "$cmd" 2 "$dir"
  res=$("$py" -I -S "$work/kill_at.py" "$work/ref/$cmd-1" "$work/ref/$cmd-2" "$parent" \
    "$signum" "$mode" "${arg:-0}" "$work/stdout" "$work/stderr" -- "${args[@]}")
  read -r rc sent _ w side <<<"$res"
  outcome=fail
  if [ -z "$side" ] || [ "$rc" = hang ]; then
    fail "$what: ${side:-the poller failed: $res}"
    return
  fi
  if [ "$sent" = 0 ] || [ "$rc" = 0 ]; then
    # finished before the signal: a miss, but then the result must be the new one, complete
    if [ "$rc" != 0 ] || [ "$side" != new ]; then
      fail "$what: not killed, yet exit $rc, $side; stderr: $(head -c 300 "$work/stderr")"
      return
    fi
    misses[$sig]=$((${misses[$sig]:-0} + 1))
    echo "miss $what: the run had finished (retried)"
    outcome=miss
    rm -rf "$parent"
    return
  fi
  local want=$((128 + signum)) problems="" staged
  [ "$rc" = "$want" ] || problems+="exit $rc (want $want); "
  case $side in old | new) ;; *) problems+="$side; " ;; esac
  if [ "$sig" != KILL ]; then
    # the handler stops gnuplot too: nothing may go on writing beside --out
    if ! wait_gone "$parent" 3; then
      problems+="still running after the exit: $(pgrep -a -f -- "$parent/" | head -c 300); "
    fi
    local lines msg
    # warnings (seeds < 8 here) are not the signal's message: drop them
    mapfile -t lines < <(grep -v '^dpdyn [a-z]*: warning: ' "$work/stderr")
    msg="dpdyn: interrupted (SIGINT)"
    [ "$sig" = TERM ] && msg="dpdyn: terminated (SIGTERM)"
    if [ ${#lines[@]} -ne 1 ] || [[ ${lines[0]} != "$msg"* ]]; then
      problems+="stderr is not one line '$msg...': [$(tr '\n' '|' <"$work/stderr")]; "
    fi
    staged=("$parent"/.out.dpdyn-*)
    if [ ${#staged[@]} -gt 0 ]; then
      local inside=("${staged[0]}"/* "${staged[0]}"/.[!.]*)
      problems+="staging directory left: ${staged[*]##*/} [${inside[*]##*/}]; "
    fi
    local hidden=()
    for f in "$dir"/.[!.]* "$dir"/..?*; do
      [ "${f##*/}" = .dpdyn ] || hidden+=("${f##*/}")
    done
    [ ${#hidden[@]} -eq 0 ] || problems+="temporaries left in --out: ${hidden[*]}; "
  else
    staged=("$parent"/.out.dpdyn-*)
    [ ${#staged[@]} -gt 0 ] && left[$sig]=$((${left[$sig]:-0} + 1))
    # the next run into the same parent removes what the killed one left
    if ! timeout 60 "$dpdyn" account --d=10 --n=40 --out="$dir" >/dev/null 2>"$work/stderr2"; then
      problems+="the next run (account) failed: $(head -c 300 "$work/stderr2"); "
    fi
    local after=("$parent"/.out.dpdyn-*)
    [ ${#after[@]} -eq 0 ] || problems+="staging directory left after the next run: ${after[*]##*/}; "
    wait_gone "$parent" 10 # a gnuplot outlives a SIGKILLed dpdyn: let it end
  fi
  if [ -n "$problems" ]; then
    fail "$what: ${problems%; }"
    return
  fi
  kills[$sig]=$((${kills[$sig]:-0} + 1))
  if [ "$side" = old ]; then
    olds[$sig]=$((${olds[$sig]:-0} + 1))
  else
    news[$sig]=$((${news[$sig]:-0} + 1))
  fi
  ok "$what: exit $rc, $side result${staged[0]:+ (a staging directory was left, then removed)}"
  outcome=hit
  rm -rf "$parent"
}

# ---- the window: staging directory to publication of a run left alone, per command ----
for cmd in simulate compare; do
  run_args "$cmd" 2 "$work/measure-$cmd/out"
  res=$("$py" -I -S "$work/kill_at.py" "$work/ref/$cmd-1" "$work/ref/$cmd-2" \
    "$work/measure-$cmd" 0 measure 0 "$work/stdout" "$work/stderr" -- "${args[@]}")
  read -r rc sent _ w side <<<"$res"
  if [ "$rc" != 0 ] || [ "$side" != new ] || ! awk -v w="$w" 'BEGIN { exit !(w > 0) }'; then
    fail "$cmd without a signal: $res; stderr: $(head -c 300 "$work/stderr")"
    window[$cmd]=0.02
  else
    ok "$cmd without a signal: exit 0, new result, staging directory to publication $w s"
    window[$cmd]=$w
  fi
done

# ---- the kills ----
# The first $rounds slots per command and signal: "stage:F" = F x window after the staging
# directory appears, "file:NAME" = when NAME appears in it (or it has gone), "publish".
declare -A slotlist=(
  [simulate]="stage:0 file:.dpdyn stage:0.5 publish file:summary.json stage:0.25 stage:0.75 file:release.tsv"
  [compare]="stage:0 file:.dpdyn stage:0.5 publish file:compare.gp stage:0.25 stage:0.75 file:summary.json")
for sig in INT TERM KILL; do
  for cmd in simulate compare; do
    read -r -a slots <<<"${slotlist[$cmd]}"
    for slot in "${slots[@]:0:rounds}"; do
      mode=${slot%%:*} arg=""
      [ "$mode" = "$slot" ] || arg=${slot#*:}
      if [ "$mode" = stage ] && [ "$arg" != 0 ]; then
        arg=$(awk -v w="${window[$cmd]}" -v f="$arg" 'BEGIN { printf "%.4f", w * f }')
      fi
      for ((try = 0; try < tries; try++)); do
        run_trial "$cmd" "$sig" "$mode" "$arg"
        [ "$outcome" = miss ] || break
        if [ "$mode" = stage ]; then # finished first: half the delay
          arg=$(awk -v a="$arg" 'BEGIN { printf "%.4f", a / 2 }')
        fi
      done
    done
  done
done

# ---- counts, and whether the kills hit the window at all ----
for sig in INT TERM KILL; do
  k=${kills[$sig]:-0} o=${olds[$sig]:-0} n=${news[$sig]:-0} m=${misses[$sig]:-0}
  extra=""
  [ $sig = KILL ] && extra=", a staging directory left ${left[$sig]:-0} times"
  echo "SIG$sig: $k kills: old $o, new $n; $m misses (retried)$extra"
  if [ "$k" -lt 6 ]; then
    fail "SIG$sig: only $k kills passed while the process ran (want >= 6)"
  elif [ "$o" -lt 1 ]; then
    fail "SIG$sig: no kill left the old result: the kills miss the write phase"
  elif [ $sig = KILL ] && [ "${left[$sig]:-0}" -lt 1 ]; then
    fail "SIGKILL: no kill left a staging directory: the kills miss the write phase"
  else
    ok "SIG$sig: $k kills in the window"
  fi
done

finish kill
