# dpdyn ou: Ornstein-Uhlenbeck theory of unclipped full-batch DP-GD on random features:
# expected test risk (exact discrete steps and continuous time), its bias and noise parts,
# and the test risk of theta* = Phi^+ y.
# usage: gnuplot -c rf_ou.gp trajectory.tsv trajectory.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t step test_risk bias noise test_risk_continuous theta_star_test_risk
# dpdyn-figure: second=trajectory.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
fmt = (ARGC >= 4) ? ARG4 : "png"
if (fmt eq "svg") { set terminal svg size 900,600 dynamic font "sans,12" } else { set terminal pngcairo size 900,600 font "sans,11" }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",9" }
set xlabel "DP-GD step k"
set ylabel "expected test risk"
set logscale y
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set grid
set key bottom right opaque box
pos(x) = (x > 0) ? x : NaN
plot data u 2:(pos($3)) w l lc rgb "#e31a1c" lw 2 t "OU, exact discrete steps", \
     data u 2:(pos($6)) w l lc rgb "#ff7f00" lw 1.5 dt 2 t "OU, continuous time t = η k", \
     data u 2:(pos($4)) w l lc rgb "#555555" lw 1 dt 3 t "bias (mean path)", \
     data u 2:(pos($5)) w l lc rgb "#555555" lw 1 dt 4 t "noise Tr(Cov Σ_φ)", \
     data u 2:(pos($7)) w l lc rgb "#000000" lw 1 dt 3 t "θ* = Φ^+y test risk"
