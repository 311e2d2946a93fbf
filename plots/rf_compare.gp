# dpdyn compare --model=rf: simulated DP-GD test risk (mean +- 2 SE) against the
# Ornstein-Uhlenbeck theory (exact discrete steps), with the fraction of clipped samples on
# the right axis: the theory holds while that fraction is zero.
# usage: gnuplot -c rf_compare.gp trajectory.tsv clipping.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t step train_risk train_risk_se test_risk test_risk_se
#                         clipped_fraction ou_test_risk ou_bias ou_noise
#                         ou_test_risk_continuous theta_star_test_risk
# clipping.tsv columns:   t step clipped_fraction
# dpdyn-figure: second=clipping.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
clipping = ARG2
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
set ylabel "test risk (mean squared error)"
set y2label "clipped fraction"
# Linear risk axis from 0 to the largest simulated (or theoretical) risk, with headroom for the
# key; theta*'s line is drawn only when it falls inside (it is huge near p = n).
stats data u 5 nooutput name "S"
stats data u 8 nooutput name "O"
set yrange [0:1.4*(S_max > O_max ? S_max : O_max)]
set y2range [0:1.4]
set y2tics 0, 0.2, 1
set ytics nomirror
set key top right
pos(x) = (x > 0) ? x : NaN
plot data u 2:(pos($5-2*$6)):($5+2*$6) w filledcurves lc rgb sky fs transparent solid 0.6 noborder t "DP-GD ± 2 SE", \
     data u 2:5 w l lc rgb blue lw 1.5 t "DP-GD test risk (simulated)", \
     data u 2:(pos($8)) w l lc rgb vermillion lw 2 dt 2 t "OU theory (exact discrete)", \
     data u 2:(pos($12)) w l lc rgb "#000000" lw 1 dt 3 t "θ* = Φ^+y test risk", \
     clipping u 2:3 axes x1y2 w l lc rgb green t "clipped fraction (right axis)"
