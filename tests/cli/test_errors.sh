#!/usr/bin/env bash
# Bad input: exit status 1, a one-line message naming the key, the value and
# the allowed range, and nothing written to the output directory.
# usage: test_errors.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
passes=0

# expect_error NAME PATTERN ARGS... : exit 1, stderr one line matching PATTERN, no output dir.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local out="$work/out-$name"
  "$dpdyn" "$@" --out="$out" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  local lines
  lines=$(wc -l <"$work/stderr")
  if [ "$rc" -ne 1 ]; then
    echo "FAIL $name: exit $rc (want 1); stderr: $(cat "$work/stderr")"
    fails=$((fails + 1))
  elif [ "$lines" -ne 1 ] || ! grep -qE -- "$pattern" "$work/stderr"; then
    echo "FAIL $name: message does not match /$pattern/ in one line: $(cat "$work/stderr")"
    fails=$((fails + 1))
  elif [ -e "$out" ]; then
    echo "FAIL $name: output directory was created"
    fails=$((fails + 1))
  else
    echo "ok   $name: $(cat "$work/stderr")"
    passes=$((passes + 1))
  fi
}

base=(--d=50 --n=200 --seeds=2 --grid=5)
expect_error unknown_key "unknown key 'colour'" ode "${base[@]}" --colour=red
expect_error negative_c "'c': -1 \(allowed: 0 < c, or inf\)" ode "${base[@]}" --c=-1
expect_error zero_rho "'rho': 0 \(allowed: 0 < rho, or inf\)" ode "${base[@]}" --c=1 --rho=0
expect_error negative_rho "'rho': -2 \(allowed" simulate "${base[@]}" --c=1 --rho=-2
expect_error inf_c_finite_rho "'c': inf with rho = 1 \(allowed: finite c" compare "${base[@]}" --rho=1
expect_error unstable_eta "'eta0': 9 .*stability limit" ode "${base[@]}" --eta0=9
expect_error unstable_optimal "'c1'.*stability limit" ode "${base[@]}" --schedule=optimal --c1=5 --c2=0.1
expect_error d_zero "'d': '0' \(allowed: integer 1 <=" ode --d=0 --n=10
expect_error nan_zeta "'zeta': 'nan' \(allowed: a number" ode "${base[@]}" --zeta=nan
expect_error nan_c "'c': 'NaN' \(allowed: a number" ode "${base[@]}" --c=NaN
expect_error garbage_n "'n': '12x' \(allowed: integer" ode --d=5 --n=12x
expect_error missing_n "missing value for 'n'" ode --d=5
expect_error negative_seeds "'seeds': '-3' \(allowed: integer 1 <=" simulate "${base[@]}" --seeds=-3
expect_error increasing_private "'schedule'.*increases.*non-increasing" ode "${base[@]}" --schedule=hyperbolic --a=-0.5 --c=1 --rho=1
expect_error unknown_schedule "'schedule': 'cosmic'" ode "${base[@]}" --schedule=cosmic
expect_error bad_levels "'spectrum': 'levels:1\*0'" ode "${base[@]}" --spectrum='levels:1*0'
expect_error levels_sum "'spectrum': multiplicities sum to 30 but d = 50" ode "${base[@]}" --spectrum='levels:1*10,2*20'
expect_error bad_powerlaw "'spectrum': 'powerlaw:-1'" ode "${base[@]}" --spectrum=powerlaw:-1
expect_error delta_range "'delta': 1 \(allowed: 0 < delta < 1\)" account "${base[@]}" --c=1 --rho=1 --delta=1
expect_error eps_without_delta "missing value for 'delta'" account "${base[@]}" --c=1 --epsilon=1
expect_error bad_model "'model': 'cnn'" ode "${base[@]}" --model=cnn

expect_error unknown_noise "'noise': 'cauchy' \(allowed: gaussian, laplace, rademacher, student:NU\)" simulate "${base[@]}" --noise=cauchy
expect_error student_nu "'noise': 'student:2' \(allowed: student:NU with finite NU > 2" ode "${base[@]}" --noise=student:2
expect_error dt_zero "'dt': 0 \(allowed: 0 < dt <= 1\)" sde "${base[@]}" --dt=0
expect_error dt_big "'dt': 1.5 \(allowed: 0 < dt <= 1\)" sde "${base[@]}" --dt=1.5
expect_error step_factor "'factor': -0.5 \(allowed: 0 < factor\)" ode "${base[@]}" --schedule=step --factor=-0.5
expect_error step_increasing "'schedule': 'step' increases" ode "${base[@]}" --schedule=step --factor=2 --eta0=0.5 --c=1 --rho=1
expect_error cosine_eta_min "'eta_min': -1 \(allowed: 0 <= eta_min\)" ode "${base[@]}" --schedule=cosine --eta_min=-1
expect_error volterra_schedule "'schedule': sqrt .* is not constant" ode "${base[@]}" --schedule=sqrt --method=volterra
expect_error bad_method "'method': 'rk4' \(allowed: bdf, adams, volterra\)" ode "${base[@]}" --method=rk4
expect_error tune_volterra "'method': 'volterra' with tune \(allowed for tune: bdf, adams;" tune "${base[@]}" --method=volterra
expect_error rf_eta "'eta': -1 \(allowed: 0 < eta\)" account --model=rf --eta=-1 --steps=10 --epsilon=1 --delta=1e-3
expect_error rf_steps "'steps': '0' \(allowed: integer 1 <=" account --model=rf --eta=0.1 --steps=0 --epsilon=1 --delta=1e-3
expect_error rf_delta "'delta': 1.5 \(allowed: 0 < delta < 1\)" account --model=rf --eta=0.1 --steps=10 --epsilon=1 --delta=1.5
expect_error rf_eps "'epsilon': -2 \(allowed: 0 < epsilon" account --model=rf --eta=0.1 --steps=10 --epsilon=-2 --delta=1e-3
expect_error rf_both "'sigma': given together with epsilon \(allowed: one of epsilon" account --model=rf --eta=0.1 --steps=10 --epsilon=1 --sigma=3 --delta=1e-3
# model=rf simulate / ou / compare (small sizes: validation happens before anything is built)
rf=(--model=rf --d=10 --n=20 --p=30 --n_test=10 --steps=5 --seeds=2)
expect_error rf_p_zero "'p': '0' \(allowed: integer 1 <= p" simulate "${rf[@]}" --p=0
expect_error rf_p_text "'p': 'many' \(allowed: integer 1 <= p" compare "${rf[@]}" --p=many
expect_error rf_eta_zero "'eta': 0 \(allowed: 0 < eta\)" simulate "${rf[@]}" --eta=0
expect_error rf_eta_negative "'eta': -0.5 \(allowed: 0 < eta\)" ou "${rf[@]}" --eta=-0.5
expect_error rf_eps_zero "'epsilon': 0 \(allowed: 0 < epsilon" simulate "${rf[@]}" --clip=1 --epsilon=0
expect_error rf_delta_zero "'delta': 0 \(allowed: 0 < delta < 1\)" compare "${rf[@]}" --clip=1 --epsilon=1 --delta=0
expect_error rf_delta_one "'delta': 1 \(allowed: 0 < delta < 1\)" simulate "${rf[@]}" --clip=1 --epsilon=1 --delta=1
expect_error rf_activation "'activation': 'sigmoid' \(allowed: tanh, relu_centered, hermite13, relu, abs_centered, hermite134\)" simulate "${rf[@]}" --activation=sigmoid
expect_error rf_target "'target': 'cubic' \(allowed: linear, sign, hermite2, file:PATH\)" ou "${rf[@]}" --target=cubic
expect_error rf_input "'input': 'cube' \(allowed: gaussian, sphere, file:PATH\)" compare "${rf[@]}" --input=cube
expect_error rf_clip_zero "'clip': 0 \(allowed: 0 < clip, or inf\)" simulate "${rf[@]}" --clip=0
expect_error rf_private_noclip "'clip': inf with epsilon given \(allowed: finite clip" simulate "${rf[@]}" --epsilon=2
expect_error rf_sigma_noclip "'clip': inf with sigma > 0 \(allowed: finite clip" compare "${rf[@]}" --sigma=2
expect_error rf_calibration "'calibration': 'rdp' \(allowed: exact, moments\)" simulate "${rf[@]}" --clip=1 --epsilon=1 --calibration=rdp
expect_error rf_moments_range "'epsilon': 50 with calibration = moments \(allowed: 0 < epsilon < 8 log\(1/delta\)" simulate "${rf[@]}" --clip=1 --epsilon=50 --delta=1e-2 --calibration=moments
expect_error rf_resample "'resample': 'both' \(allowed: noise, data, all\)" simulate "${rf[@]}" --resample=both
expect_error rf_resample_compare "'resample': 'ALL' \(allowed: noise, data, all\)" compare "${rf[@]}" --resample=ALL
expect_error rf_linreg_key "key 'c' does not apply to model=rf simulate" simulate "${rf[@]}" --c=0.5
expect_error linreg_rf_key "key 'clip' does not apply to model=linreg" simulate "${base[@]}" --clip=0.5
expect_error rf_ode "'model': 'rf' \(allowed for ode: linreg; model=rf has simulate, ou, compare" ode "${rf[@]}"
expect_error ou_linreg "'model': 'linreg' \(allowed for ou: rf; model=linreg has simulate, sde, ode" ou --model=linreg --d=10 --n=20
printf 'model = linreg\nd = 50\nthis line is not ini\n' >"$work/bad.ini"
expect_error malformed_ini "malformed INI file .* at line 3" ode "$work/bad.ini" --n=100
printf 'model = linreg\nd = 50\nn = 100\nwidth = 3\n' >"$work/unknown.ini"
expect_error ini_unknown_key "unknown key 'width' in the INI file" ode "$work/unknown.ini"
expect_error missing_ini "cannot open INI file" ode "$work/none.ini"
printf '1.0 10\n2.0 abc\n' >"$work/spec.txt"
expect_error malformed_spectrum_file "'spectrum': file .* line 2 is malformed" ode --n=100 --spectrum="file:$work/spec.txt"
printf '1.0 10\n-2.0 40\n' >"$work/spec2.txt"
expect_error negative_eigenvalue "'spectrum': eigenvalue -2" ode --n=100 --spectrum="file:$work/spec2.txt"
printf '0 1\n0.5 0.5\n0.4 0.4\n1 0.1\n' >"$work/sched.txt"
expect_error unsorted_schedule "'schedule': t = 0.4 at row 3" ode "${base[@]}" --schedule="file:$work/sched.txt"
printf '0.1\n0.2\n0.3\n0.4\n' >"$work/theta.txt"
printf '0 1\n0.5 -0.5\n1 0.1\n' >"$work/negsched.txt"
expect_error negative_schedule_eta "'schedule': eta = -0.5 at row 2 \(allowed: >= 0\)" ode "${base[@]}" --schedule="file:$work/negsched.txt"
printf '0.1 0.0\n0.1 -0.2\n' >"$work/seq.txt"
expect_error negative_sequence "'sequence': row 2 of .* sigma = -0.2 \(allowed: eta >= 0, sigma >= 0\)" account --sequence="$work/seq.txt"
expect_error theta_file_length "'theta_star': .* has 4 values but d = 50" ode "${base[@]}" --theta_star="file:$work/theta.txt"

# Numerical failure is exit 2 with a message, and nothing half-written.
# (Valid input: a well-formed run must not fail.)
"$dpdyn" ode "${base[@]}" --out="$work/good" >/dev/null 2>"$work/stderr"
rc=$?
if [ "$rc" -ne 0 ] || [ ! -s "$work/good/summary.json" ]; then
  echo "FAIL valid_run: exit $rc: $(cat "$work/stderr")"
  fails=$((fails + 1))
else
  passes=$((passes + 1))
fi
if ls -A "$work/good" | grep -v '^\.dpdyn$' | grep -q '^\.'; then
  echo "FAIL valid_run: temporary files left behind"
  fails=$((fails + 1))
fi

echo "errors: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
