# dpdyn simulate --model=rf: full-batch DP-GD on random features, train and test risk
# (mean +- 2 SE over replicates), the test risk of theta* = Phi^+ y, and the fraction of
# clipped samples at every step on the right axis.
# usage: gnuplot -c rf_simulate.gp trajectory.tsv clipping.tsv OUT [png|svg|pdf] [title] [caption]
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
set ylabel "risk (mean squared error)"
# Linear risk axis from 0 to the largest simulated risk, with headroom for the key; theta*'s line
# is drawn only when it falls inside (it is huge near p = n), otherwise a note gives its value;
# the clipped fraction (right axis) only when some sample is clipped.
# one replicate has no standard errors (nan, or 0 in older files): the band is left out and the
# curve drawn alone (S(c): the SE column named c, or 0 without reading it)
stats data u ((strcol("test_risk_se") eq "nan" || column("test_risk_se") <= 0) ? 0 : 1) nooutput name "HS"
has_se = (HS_sum > 0)
S(c) = has_se ? column(c) : 0
stats data u (column("test_risk") + 2 * S("test_risk_se")) nooutput name "S"
# theta_star = off: the column is nan throughout (no stats on it, no warning)
stats data u ((strcol("theta_star_test_risk") eq "nan") ? 0 : 1) nooutput name "TSN"
if (TSN_sum > 0) { stats data u "theta_star_test_risk" nooutput name "TS" }
stats clipping u "clipped_fraction" nooutput name "CF"
ymax = 1.45 * S_max
has_star = exists("TS_max")  # theta_star = off: the column is nan
star_in = has_star && (TS_max <= ymax)
clipped = (CF_max > 0)
set yrange [0:ymax]
if (clipped) { set y2label "clipped fraction"; set y2range [0:1.45]; set y2tics 0, 0.2, 1; set ytics nomirror }
if (has_star && !star_in) { set label 102 sprintf("θ* = Φ^+y test risk %.3g: above the range, not drawn", TS_max) at graph 0.02, graph 0.04 left font ",10" tc rgb grey front }
set key top right
pos(x) = (x > 0) ? x : NaN
STAR = star_in ? 'data u "step":"theta_star_test_risk" w l lc rgb black lw 1.5 dt 3 t "θ* = Φ^+y test risk", ' : ''
CLIP = clipped ? 'clipping u "step":"clipped_fraction" axes x1y2 w l lc rgb green lw 1.5 t "clipped fraction (right axis)", ' : ''
BAND = has_se ? 'data u "step":(pos(column("test_risk") - 2 * column("test_risk_se"))):(column("test_risk") + 2 * column("test_risk_se")) w filledcurves lc rgb sky fs transparent solid 0.45 border lc rgb blue t "DP-GD test risk ± 2 SE", ' : ''
plot @BAND \
     data u "step":"test_risk" w l lc rgb blue lw 1.5 t (has_se ? "" : "DP-GD test risk (one replicate)"), \
     data u "step":"train_risk" w l lc rgb purple lw 1.5 dt 2 t "DP-GD train risk (mean)", @STAR @CLIP \
     NaN notitle
