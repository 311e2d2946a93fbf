# dpdyn compare: DP-SGD simulation (mean +- 2 SE) against the deterministic
# equivalent (coupled risk ODEs), its two-sided bounds and the release jump.
# usage: gnuplot -c compare.gp trajectory.tsv release.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t excess_risk excess_risk_se ode_excess_risk
#                         [ode_lower_bound ode_upper_bound] clipped_fraction
#                         (no bound columns when the ODE method does not give them, e.g. volterra)
# release.tsv columns:    t before before_se after after_se ode_before ode_after
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
if (fmt eq "svg") { set terminal svg size 900,600 dynamic font "sans,12" } else { set terminal pngcairo size 900,600 font "sans,11" }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",9" }
set xlabel "t = k / n"
set ylabel "excess risk"
set logscale y
set grid
set key bottom left opaque box
set xrange [0:1.05]
pos(x) = (x > 0) ? x : NaN
stats data u 1 nooutput
BOUNDS = (STATS_columns >= 7) ? \
  'data u 1:5 w l lc rgb "#555555" lw 1 dt 3 t "ODE lower bound", data u 1:6 w l lc rgb "#555555" lw 1 dt 4 t "ODE upper bound",' : ''
plot data u 1:(pos($2-2*$3)):($2+2*$3) w filledcurves lc rgb "#a6cee3" fs transparent solid 0.6 noborder t "DP-SGD mean ± 2 SE", \
     data u 1:2 w l lc rgb "#1f78b4" lw 1.5 t "DP-SGD mean", \
     data u 1:4 w l lc rgb "#e31a1c" lw 2 dt 2 t "ODE (deterministic equivalent)", @BOUNDS \
     release u 1:6:(0):($7-$6) w vectors head filled lc rgb "#e31a1c" lw 1.5 t "ODE release jump", \
     release u ($1+0.015):4:(2*$5) w yerrorbars pt 7 ps 0.8 lc rgb "#1f78b4" t "DP-SGD released iterate ± 2 SE"
