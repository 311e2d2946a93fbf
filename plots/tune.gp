# dpdyn tune: the released excess risk R_out of the deterministic equivalent over the clipping
# scale c and the initial learning rate eta~(0) (the other schedule parameters at the optimum),
# the tuned optimum marked, contours at fixed multiples of its risk; beside it the confirmation
# at the optimum: DP-SGD simulation (mean +- 2 SE) against the ODE.
# usage: gnuplot -c tune.gp trajectory.tsv release.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t excess_risk excess_risk_se ode_excess_risk
#                         ode_lower_bound ode_upper_bound clipped_fraction
# release.tsv columns:    t sim_before sim_before_se sim_after sim_after_se ode_before ode_after
#                         c eta0
# heatmap.tsv (read from the directory of trajectory.tsv when present): c eta0 excess_risk, one
# scanline per c, blank lines between scanlines.
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
dir = ""
do for [i = strlen(data):1:-1] { if (dir eq "" && data[i:i] eq "/") { dir = data[1:i] } }
hm = dir."heatmap.tsv"
have_hm = int(system("test -r '".hm."' && echo 1 || echo 0"))
# Parameters from the '# key = value' header of the data file.
param(k) = system("sed -n 's/^# ".k." = //p' '".data."' | head -n 1")
num(k) = sprintf("%.4g", real(param(k)))
have_sim = param("confirm_seeds") ne "0"
heading = sprintf("dpdyn tune: d = %s, n = %s, γ = %s, ρ = %s, ζ = %s, spectrum %s, schedule %s%s", \
                  param("d"), param("n"), num("gamma"), param("rho"), num("zeta"), param("spectrum"), \
                  param("schedule"), have_sim ? ", ".param("confirm_seeds")." replicates" : "")
width = have_hm ? 1500 : 900
if (fmt eq "svg") { set terminal svg size width,650 dynamic font "sans,12" } else { set terminal pngcairo size width,650 font "sans,11" }
set output ARG3

stats release u 7 nooutput
r_opt = STATS_max
stats release u 8 nooutput
c_opt = STATS_max
stats release u 9 nooutput
eta_opt = STATS_max
stats data u 4 nooutput
r_lo = STATS_min
r_hi = STATS_max

if (have_hm) {
  set multiplot layout 1,2 title heading noenhanced font ",12" margins 0.06, 0.98, 0.11, 0.86 spacing 0.17
  # Spacing of the eta~(0) axis: linear if the first step equals the mean step.
  stats hm u 2 every :::0::0 nooutput
  e_lo = STATS_min
  e_hi = STATS_max
  n_per = STATS_records
  stats hm u 2 every ::1:0:1:0 nooutput
  e_2 = STATS_min
  eta_log = abs((e_2 - e_lo) - (e_hi - e_lo) / (n_per - 1)) > 1e-6 * (e_hi - e_lo)
  stats hm u 3 nooutput
  r_max = STATS_max
  set logscale x
  if (eta_log) { set logscale y }
  # Contours of R_out at fixed multiples of the optimum.
  set contour base
  set cntrparam levels discrete 1.01 * r_opt, 1.1 * r_opt, 1.5 * r_opt, 3 * r_opt
  set cntrparam cubicspline
  unset surface
  set table $contours
  splot hm u 1:2:3 w l
  unset table
  unset contour
  set surface
  set view map
  set logscale cb
  top = (r_max < 10 * r_opt) ? r_max : 10 * r_opt
  set cbrange [r_opt:top]
  set palette defined (0 "#0d0887", 1 "#6a00a8", 2 "#b12a90", 3 "#e16462", 4 "#fca636", 5 "#f0f921")
  set cblabel "released excess risk R_{out} (ODE)" offset 0.5,0
  set format cb "%.3g"
  set cbtics (r_opt, 1.1 * r_opt, 1.5 * r_opt, 2 * r_opt, 3 * r_opt, 5 * r_opt, 10 * r_opt)
  set xlabel "clipping scale c"
  set ylabel "initial learning rate η̃(0)   (top: stability limit × safety)"
  set autoscale xfix
  set autoscale yfix
  unset key
  set title sprintf("optimum (×): c = %.3g, η̃(0) = %.3g, R_{out} = %.4g\ncontours at 1.01, 1.1, 1.5, 3 × optimum; colours clipped at 10 ×", c_opt, eta_opt, r_opt) font ",11"
  set tics out
  clamp(r) = (r > top) ? top : r
  splot hm u 1:2:(clamp($3)) w pm3d notitle, \
        $contours u 1:2:(r_opt) w l lc rgb "white" lw 1.2 dt 2 notitle, \
        release u 8:9:(r_opt) w p pt 7 ps 2.4 lc rgb "white" notitle, \
        release u 8:9:(r_opt) w p pt 2 ps 2 lw 3 lc rgb "#00a040" notitle
  reset
  set title (have_sim ? "confirmation at the optimum: DP-SGD against the ODE" : "ODE at the optimum (no confirmation run)") font ",11"
} else {
  set title heading noenhanced font ",11"
}
set xlabel "t = k / n"
set ylabel "excess risk"
set logscale y
set yrange [r_lo / 1.3 : r_hi * 1.3]
set format y "%g"
do for [e = -12:2] { set ytics add (2 * 10**e, 5 * 10**e) }
set grid
set key top right opaque box font ",10"
set xrange [0:1.05]
pos(x) = (x > 0) ? x : NaN
sim(t) = have_sim ? t : ""
plot data u 1:(pos($2-2*$3)):($2+2*$3) w filledcurves lc rgb "#56B4E9" fs transparent solid 0.6 noborder t sim("DP-SGD mean ± 2 SE"), \
     data u 1:2 w l lc rgb "#0072B2" lw 1.5 t sim("DP-SGD mean"), \
     data u 1:4 w l lc rgb "#D55E00" lw 2 dt 2 t "ODE (deterministic equivalent)", \
     data u 1:5 w l lc rgb "#666666" lw 1 dt 3 t "ODE lower bound", \
     data u 1:6 w l lc rgb "#666666" lw 1 dt 4 t "ODE upper bound", \
     release u 1:6:(0):($7-$6) w vectors head filled lc rgb "#D55E00" lw 1.5 t "ODE release jump", \
     release u ($1+0.015):4:(2*$5) w yerrorbars pt 7 ps 0.8 lc rgb "#0072B2" t sim("DP-SGD released iterate ± 2 SE")
if (have_hm) { unset multiplot }
