#!/usr/bin/env bash
# Resource limits: the memory estimate that dpdyn checks against max_memory before any large
# allocation is compared with the peak RSS of real runs (GNU time), and a run over the limit is
# refused at once, naming the key that drives the size, without allocating.
# usage: test_limits.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/time ]; then
  echo "FAIL GNU time (/usr/bin/time, Debian package 'time') is missing: run scripts/setup.sh"
  echo "limits: 0 passed, 1 failed"
  exit 1
fi
# Under AddressSanitizer the RSS includes shadow memory and quarantine: only the refusals are
# checked there.
asan=0
if ldd "$dpdyn" 2>/dev/null | grep -q libasan || nm "$dpdyn" 2>/dev/null | grep -q __asan_init; then
  asan=1
fi

# estimate_vs_rss NAME ARGS...: memory_estimate_bytes / peak RSS in [0.8, 1.25]. The runs are
# chosen so that the estimated arrays dominate the process's fixed ~10-20 MB of libraries.
estimate_vs_rss() {
  local name=$1
  shift
  local out="$work/$name"
  if ! /usr/bin/time -f %M -o "$work/rss" "$dpdyn" "$@" --out="$out" >/dev/null 2>"$work/err"; then
    bad "$name: run failed: $(cat "$work/err")"
    return
  fi
  local est rss
  est=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['memory_estimate_bytes'])" "$out/summary.json")
  rss=$(($(tail -1 "$work/rss") * 1024))
  if python3 -c "import sys; e, r = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0.8 <= e / r <= 1.25 else 1)" "$est" "$rss"; then
    ok "$name: estimate $((est / 1000000)) MB, peak RSS $((rss / 1000000)) MB"
  else
    bad "$name: estimate $est bytes vs peak RSS $rss bytes (allowed ratio 0.8-1.25)"
  fi
}

# refused NAME KEY ARGS...: exit 1 naming KEY and max_memory, in < 2 s, peak RSS < 64 MB.
refused() {
  local name=$1 key=$2
  shift 2
  local out="$work/$name" t0 t1 rc rss
  t0=$(date +%s.%N)
  /usr/bin/time -f %M -o "$work/rss" "$dpdyn" "$@" --out="$out" >/dev/null 2>"$work/err"
  rc=$?
  t1=$(date +%s.%N)
  rss=$(tail -1 "$work/rss")
  if [ "$rc" -ne 1 ]; then
    bad "$name: exit $rc (want 1): $(cat "$work/err")"
  elif [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q "'$key'.*max_memory" "$work/err"; then
    bad "$name: message does not name '$key' and max_memory: $(cat "$work/err")"
  elif [ -e "$out" ]; then
    bad "$name: output directory created"
  elif ! python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 2 else 1)" "$t0" "$t1"; then
    bad "$name: took $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1") s"
  elif [ "$rss" -gt 65536 ] && [ "$asan" = 0 ]; then
    bad "$name: peak RSS $rss kB before refusing"
  else
    ok "$name: $(cat "$work/err")"
  fi
}

if [ "$asan" = 0 ]; then
  estimate_vs_rss account_n account --d=10 --n=5000000 --c=1 --rho=1
  estimate_vs_rss ode_iso_d ode --d=3000000 --n=12000000 --grid=3 --compress=off
  estimate_vs_rss ode_powerlaw_groups ode --d=200000 --n=800000 --spectrum=powerlaw:1 --grid=3 \
    --compress=off
  estimate_vs_rss simulate_n simulate --d=4 --n=5000000 --seeds=2 --grid=3 --threads=2
  estimate_vs_rss simulate_seeds simulate --d=4 --n=16 --seeds=400000 --grid=11 --threads=2
  estimate_vs_rss rf_simulate_p simulate --model=rf --d=50 --n=800 --p=4000 --n_test=500 \
    --steps=3 --seeds=2 --grid=3 --threads=2
  estimate_vs_rss rf_ou_n ou --d=20 --n=2000 --p=2500 --n_test=200 --steps=3 --grid=3
else
  echo "skip estimate_vs_rss: AddressSanitizer build (RSS includes shadow memory)"
fi
refused ref_account_n n account --d=10 --n=10000000 --c=1 --rho=1 --max_memory=50M
refused ref_ode_d d ode --d=5000000 --n=20000000 --grid=3 --compress=off --max_memory=50M
refused ref_levels spectrum ode --n=40000000 --spectrum=levels:1*5000000,2*5000000 --compress=off \
  --max_memory=50M
refused ref_gamma gamma simulate --d=4 --gamma=5e-7 --seeds=2 --grid=3 --max_memory=50M
refused ref_seeds seeds simulate --d=4 --n=16 --seeds=16000000 --grid=11 --max_memory=50M
refused ref_rf_p p simulate --model=rf --d=50 --n=1000 --p=60000 --n_test=500 --steps=3 \
  --seeds=2 --max_memory=50M
refused ref_rf_n n ou --d=20 --n=20000 --p=300 --n_test=200 --steps=3 --max_memory=50M
refused ref_default_ram d ode --n=8589934588 --d=2147483647 --theta_star=random --compress=off

# The file size limit (ulimit -f, RLIMIT_FSIZE): a write past it is reported like a full disk,
# exit 3 with one line naming the limit, and no staging directory or temporary left (SIGXFSZ
# killed the process without a word before).
fsize() { # NAME BLOCKS DIR ARGS... : (ulimit -f BLOCKS; dpdyn ARGS...) run in DIR
  local name=$1 blocks=$2 dir=$3 rc
  shift 3
  mkdir -p "$dir"
  (
    cd "$dir" || exit 99
    ulimit -f "$blocks"
    "$dpdyn" "$@" >/dev/null 2>"$work/err"
  )
  rc=$?
  if [ "$rc" -ne 3 ]; then
    bad "$name: exit $rc (want 3): $(head -c 300 "$work/err")"
  elif [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q 'ulimit -f' "$work/err"; then
    bad "$name: want one line naming ulimit -f: $(head -c 300 "$work/err")"
  elif [ -n "$(find "$dir" -name '.*dpdyn-*' -print -quit)" ]; then
    bad "$name: left $(find "$dir" -name '.*dpdyn-*' | head -3 | tr '\n' ' ')"
  else
    ok "$name: $(cat "$work/err")"
  fi
}
fsize fsize_simulate 1 "$work/fs1" simulate --d=200 --n=800 --seeds=4 --out=o
[ -e "$work/fs1/o" ] && bad "fsize_simulate: the output directory was published"
fsize fsize_simulate_plot 16 "$work/fs2" simulate --d=5 --n=20 --seeds=2 --plot=1 --out=o
"$dpdyn" ode --d=5 --n=20 --out="$work/fs3/o" >/dev/null 2>&1
fsize fsize_plot 8 "$work/fs3" plot o
if compgen -G "$work/fs3/o/*.png" >/dev/null; then
  bad "fsize_plot: a truncated image was left: $(ls "$work/fs3/o")"
fi
# sweep: the point's failure line and the sweep's closing line; exit 3, no staging left.
mkdir -p "$work/fs4"
(cd "$work/fs4" && ulimit -f 1 && "$dpdyn" sweep simulate --d=200 --n=800 --seeds=2 \
  --c=0.5,1 --out=sw >/dev/null 2>"$work/err")
rc=$?
if [ "$rc" -eq 3 ] && grep -q 'ulimit -f' "$work/err" &&
  [ -z "$(find "$work/fs4" -name '.*dpdyn-*' -print -quit)" ]; then
  ok "fsize_sweep: $(head -1 "$work/err")"
else
  bad "fsize_sweep: exit $rc: $(head -c 300 "$work/err") $(find "$work/fs4" -name '.*dpdyn-*')"
fi

# Output directories follow the umask (mkdtemp's 0700 was kept whatever the umask).
for m in 022 002 077; do
  (umask "$m" && "$dpdyn" ode --d=5 --n=20 --out="$work/umask$m" >/dev/null 2>&1)
  want=$(printf '%o' $((0777 & ~8#$m)))
  got=$(stat -c %a "$work/umask$m" 2>/dev/null)
  if [ "$got" = "$want" ]; then
    ok "umask_$m: mode $got"
  else
    bad "umask_$m: mode '$got' (want $want)"
  fi
done
(umask 002 && "$dpdyn" sweep simulate --d=5 --n=20 --seeds=2 --c=0.5,1 \
  --out="$work/umask_sweep" >/dev/null 2>&1)
got=$(find "$work/umask_sweep" -type d ! -perm 775 | head -3)
if [ -d "$work/umask_sweep/points/0000" ] && [ -z "$got" ]; then
  ok "umask_sweep: every directory 775"
else
  bad "umask_sweep: directories not 775: $got"
fi

finish limits
