# dpdyn ou: Ornstein-Uhlenbeck theory of unclipped full-batch DP-GD on random features:
# expected test risk (exact discrete steps and continuous time), its bias and noise parts,
# and the test risk of theta* = Phi^+ y.
# usage: gnuplot -c rf_ou.gp trajectory.tsv trajectory.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t step test_risk bias noise test_risk_continuous theta_star_test_risk
# dpdyn-figure: second=trajectory.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
# title above, the full parameter line as a caption below
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
set xlabel "DP-GD step k"
set ylabel "expected test risk"
set logscale y
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set format y "%g"
set mytics 10
do for [e = -15:5] { set ytics add (2 * 10.0**e, 5 * 10.0**e) }
set key bottom right
pos(x) = (x > 0) ? x : NaN
# the continuous-time curve is drawn when it differs from the discrete one by more than 1%
stats data u (abs(column("test_risk_continuous") / column("test_risk") - 1)) nooutput name "CD"
CONT = (CD_max > 0.01) ? 'data u "step":(pos(column("test_risk_continuous"))) w l lc rgb orange lw 2 dt 2 t "OU, continuous time t = η k", ' : ''
if (CD_max <= 0.01) { set label 102 "continuous time t = η k: equal within 1%, not drawn" at graph 0.1, graph 0.04 left font ",10" tc rgb grey front }
plot data u "step":(pos(column("test_risk"))) w l lc rgb vermillion lw 2.5 t "OU, exact discrete steps", @CONT \
     data u "step":(pos(column("bias"))) w l lc rgb blue lw 1.5 dt 3 t "bias (mean path)", \
     data u "step":(pos(column("noise"))) w l lc rgb green lw 1.5 dt 4 t "noise Tr(Cov Σ_φ)", \
     data u "step":(pos(column("theta_star_test_risk"))) w l lc rgb black lw 1.5 dt 5 t "θ* = Φ^+y test risk"
