# dpdyn simulate --model=rf: full-batch DP-GD on random features, train and test risk
# (mean +- 2 SE over replicates), the test risk of theta* = Phi^+ y, and the fraction of
# clipped samples at every step on the right axis.
# usage: gnuplot -c rf_simulate.gp trajectory.tsv clipping.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t step train_risk train_risk_se test_risk test_risk_se
#                         clipped_fraction theta_star_test_risk
# clipping.tsv columns:   t step clipped_fraction
# dpdyn-figure: second=clipping.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
clipping = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
if (fmt eq "svg") { set terminal svg size 900,600 dynamic font "sans,12" } else { set terminal pngcairo size 900,600 font "sans,11" }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",9" }
set xlabel "DP-GD step k"
set ylabel "risk (mean squared error)"
set y2label "clipped fraction"
# Linear risk axis from 0 to the largest simulated (or theoretical) risk, with headroom for the
# key; theta*'s line is drawn only when it falls inside (it is huge near p = n).
stats data u 5 nooutput name "S"
set yrange [0:1.4*S_max]
set y2range [0:1.4]
set y2tics 0, 0.2, 1
set ytics nomirror
set grid
set key top right opaque box
pos(x) = (x > 0) ? x : NaN
plot data u 2:(pos($5-2*$6)):($5+2*$6) w filledcurves lc rgb "#a6cee3" fs transparent solid 0.6 noborder t "test risk ± 2 SE", \
     data u 2:5 w l lc rgb "#1f78b4" lw 1.5 t "DP-GD test risk", \
     data u 2:3 w l lc rgb "#6a3d9a" lw 1 dt 2 t "DP-GD train risk", \
     data u 2:8 w l lc rgb "#000000" lw 1 dt 3 t "θ* = Φ^+y test risk", \
     clipping u 2:3 axes x1y2 w l lc rgb "#33a02c" t "clipped fraction (right axis)"
