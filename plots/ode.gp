# dpdyn ode: the deterministic equivalent R(t), its two-sided bounds and the
# last-iterate release jump.
# usage: gnuplot -c ode.gp trajectory.tsv release.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t excess_risk [lower_bound upper_bound]
# (the bound columns are absent when the method does not give the bounds, e.g. volterra)
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
set xlabel "t"
set ylabel "excess risk"
set logscale y
set grid
set key bottom left opaque box
set xrange [0:1.05]
stats data u 1 nooutput
BOUNDS = (STATS_columns >= 4) ? \
  'data u 1:3 w l lc rgb "#555555" dt 3 t "lower bound", data u 1:4 w l lc rgb "#555555" dt 4 t "upper bound",' : ''
plot data u 1:2 w l lc rgb "#e31a1c" lw 2 t "R(t)", @BOUNDS \
     release u 1:6:(0):($7-$6) w vectors head filled lc rgb "#e31a1c" lw 1.5 t "release jump"
