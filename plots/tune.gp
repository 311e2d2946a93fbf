# dpdyn tune: the released excess risk R_out of the deterministic equivalent over the clipping
# scale c and the initial learning rate eta~(0) (the other schedule parameters at the optimum),
# the tuned optimum marked, contours at fixed multiples of its risk; beside it the confirmation
# at the optimum: DP-SGD simulation (mean +- 2 SE) against the ODE.
# usage: gnuplot -c tune.gp trajectory.tsv release.tsv OUT [png|svg|pdf] [title] [caption]
#        [heatmap.tsv]   (the caption is not drawn; dpdyn passes the title and ./heatmap.tsv)
# trajectory.tsv columns: t excess_risk excess_risk_se ode_excess_risk
#                         ode_lower_bound ode_upper_bound clipped_fraction
# release.tsv columns:    t sim_before sim_before_se sim_after sim_after_se ode_before ode_after
#                         c eta0
# heatmap.tsv (ARG7, drawn when given): c eta0 excess_risk, one scanline per c, blank lines
# between scanlines. The script runs no command and reads only the files it is given.
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
hm = (ARGC >= 7) ? ARG7 : ""
have_hm = hm ne ""
heading = (ARGC >= 5) ? ARG5 : "linreg tune"
# the confirmation is drawn when it ran (a number in the simulation's column)
stats data u ((strcol("excess_risk") eq "nan") ? 0 : 1) nooutput name "SIM"
have_sim = SIM_sum > 0
width = have_hm ? 1500 : 900
if (fmt eq "svg") { set terminal svg size width,700 dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size width/120.,700/120. font "sans,10" } else { set terminal pngcairo size width,700 font "sans,13" } }
set output ARG3

stats release u "ode_after" nooutput
r_opt = STATS_max
stats release u "c" nooutput
c_opt = STATS_max
stats release u "eta0" nooutput
eta_opt = STATS_max
stats data u "ode_excess_risk" nooutput
r_lo = STATS_min
r_hi = STATS_max

if (have_hm) {
  set multiplot layout 1,2 title heading noenhanced font ",12" margins 0.06, 0.98, 0.12, 0.87 spacing 0.21
  # Spacing of the eta~(0) axis: linear if the first step equals the mean step.
  stats hm u "eta0" every :::0::0 nooutput
  e_lo = STATS_min
  e_hi = STATS_max
  n_per = STATS_records
  stats hm u "eta0" every ::1:0:1:0 nooutput
  e_2 = STATS_min
  eta_log = abs((e_2 - e_lo) - (e_hi - e_lo) / (n_per - 1)) > 1e-6 * (e_hi - e_lo)
  stats hm u "excess_risk" nooutput
  r_max = STATS_max
  set logscale x
  if (eta_log) { set logscale y }
  # Contours of R_out at fixed multiples of the optimum.
  set contour base
  set cntrparam levels discrete 1.01 * r_opt, 1.1 * r_opt, 1.5 * r_opt, 3 * r_opt
  set cntrparam cubicspline
  unset surface
  set table $contours
  splot hm u "c":"eta0":"excess_risk" w l
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
  # gnuplot writes contour tables with blanks whatever the separator: read this one plot with
  # blanks (the tab-separated files hold no empty or blank-containing fields), then tabs again
  set datafile separator whitespace
  splot hm u "c":"eta0":(clamp(column("excess_risk"))) w pm3d notitle, \
        $contours u 1:2:(r_opt) w l lc rgb "white" lw 1.2 dt 2 notitle, \
        release u "c":"eta0":(r_opt) w p pt 7 ps 2.4 lc rgb "white" notitle, \
        release u "c":"eta0":(r_opt) w p pt 2 ps 2 lw 3 lc rgb "#00a040" notitle
  reset
  set datafile separator "\t"
  set title (have_sim ? "confirmation at the optimum: DP-SGD against the ODE" : "ODE at the optimum (no confirmation run)") font ",11"
} else {
  set title heading noenhanced font ",11"
}
# what the right panel draws: a bound only where it lies inside the range over at least 5% of
# the time and differs from the ODE by more than 1% (on one eigenvalue group it is the ODE);
# error bars when the +-2 SE band is thinner than about 5 pixels; the jump when it is visible
ymin = r_lo / 1.3
ymax = r_hi * 1.3
stats data u (abs(column("ode_lower_bound") / column("ode_excess_risk") - 1) + abs(column("ode_upper_bound") / column("ode_excess_risk") - 1)) nooutput name "BD"
stats data u ((column("t") > 0 && column("ode_lower_bound") >= ymin) ? 1 : 0) nooutput name "LBI"
stats data u ((column("t") > 0 && column("ode_upper_bound") <= ymax) ? 1 : 0) nooutput name "UBI"
lb_in = (BD_max > 0.01 && LBI_sum >= 0.05 * LBI_records)
ub_in = (BD_max > 0.01 && UBI_sum >= 0.05 * UBI_records)
bars = 0
# one replicate has no standard errors (nan, or 0 in older files): the band and the error bars are left out
stats data u ((strcol("excess_risk_se") eq "nan" || column("excess_risk_se") <= 0) ? 0 : 1) nooutput name "HS"
has_se = have_sim && (HS_sum > 0)
S(c) = has_se ? column(c) : 0
if (has_se) {
  stats data u (column("excess_risk") > 0 && column("excess_risk_se") > 0 ? 4 * column("excess_risk_se") / column("excess_risk") : NaN) nooutput name "RW"
  bars = (RW_max / log(ymax / ymin) * 0.6 * 650 < 5)
  every_k = int(RW_records / 20) > 1 ? int(RW_records / 20) : 1
}
stats release u (abs(log(column("ode_after") / column("ode_before")))) nooutput name "J"
jump_in = (J_max / log(ymax / ymin) * 0.6 * 650 > 3)
set xlabel "t = k / n"
set ylabel "excess risk"
set logscale y
set yrange [ymin : ymax]
set format y "%g"
set mytics 10
do for [e = -12:2] { set ytics add (2 * 10.0**e, 5 * 10.0**e) }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key top right opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set xrange [0:1.05]
pos(x) = (x > 0) ? x : NaN
if (BD_max <= 0.01) { set label 102 "ODE bounds: equal to the ODE within 1%, not drawn" at graph 0.02, graph 0.04 left font ",10" tc rgb "#666666" front }
EXTRA = ""
if (has_se && !bars) { EXTRA = EXTRA . 'data u "t":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w filledcurves lc rgb "#56B4E9" fs transparent solid 0.45 border lc rgb "#0072B2" t "DP-SGD mean ± 2 SE", ' }
if (have_sim) { EXTRA = EXTRA . 'data u "t":"excess_risk" w l lc rgb "#0072B2" lw 1.5 t (bars ? "DP-SGD mean" : has_se ? "" : "DP-SGD (one replicate)"), ' }
if (have_sim && bars) { EXTRA = EXTRA . 'data every every_k::1 u "t":"excess_risk":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w yerrorbars pt 7 ps 0.5 lc rgb "#0072B2" t sprintf("DP-SGD ± 2 SE (bars, at most %.2g%% of the mean)", 50 * RW_max), ' }
if (have_sim) { EXTRA = EXTRA . 'release u (column("t") + 0.015):"sim_after":(2 * S("sim_after_se")) w yerrorbars pt 7 ps 1 lw 1.5 lc rgb "#0072B2" t (has_se ? "DP-SGD released ± 2 SE" : "DP-SGD released"), ' }
if (lb_in) { EXTRA = EXTRA . 'data u "t":"ode_lower_bound" w l lc rgb "#666666" lw 1.5 dt 3 t "ODE lower bound", ' }
if (ub_in) { EXTRA = EXTRA . 'data u "t":"ode_upper_bound" w l lc rgb "#666666" lw 1.5 dt 4 t "ODE upper bound", ' }
if (jump_in) { EXTRA = EXTRA . 'release u "t":"ode_before":(0):(column("ode_after") - column("ode_before")) w vectors head filled lc rgb "#D55E00" lw 2 t "ODE release jump", ' }
plot @EXTRA data u "t":"ode_excess_risk" w l lc rgb "#D55E00" lw 2.5 dt 2 t "ODE (deterministic equivalent)"
if (have_hm) { unset multiplot }
