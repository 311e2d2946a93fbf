# dpdyn diagnose --model=nc: how collapsed the features are. Top: each class's centred mean norm
# |M_k - mu_G| (between-class spread) and its within-class root mean square distance to M_k
# (NC1: perfect collapse has no within-class spread). Bottom: the cosine of every pair of centred
# class means against the simplex ETF value -1/(K-1).
# usage: gnuplot -c nc_diagnose.gp classes.tsv cosines.tsv OUT [png|svg|pdf] [title] [caption]
# classes.tsv columns (by name): class count centred_mean_norm within_rms
# cosines.tsv columns (by name): class_j class_k cosine
# dpdyn-figure: second=cosines.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
cosines = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 760
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11" top right
set border lw 1.2
stats data u "class" nooutput name "CL"
K = CL_records
stats data u "centred_mean_norm" nooutput name "B"
stats data u "within_rms" nooutput name "R"
stats cosines u "cosine" nooutput name "C"
etf = -1.0 / (K - 1)
lo = (B_min < R_min) ? B_min : R_min
hi = (B_max > R_max) ? B_max : R_max
bottom = (ARGC >= 6) ? 0.16 : 0.05
set multiplot title ((ARGC >= 5) ? ARG5 : "") noenhanced font ",13"
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.1 left noenhanced font ",9" tc rgb "#444444" }
# top: norms (logarithmic when both are positive and span a decade)
set lmargin at screen 0.12; set rmargin at screen 0.96
set tmargin at screen 0.90; set bmargin at screen 0.55
if (lo > 0 && hi / lo >= 10) { set logscale y; set format y "10^{%L}"; set yrange [lo / 5 : hi * 5]; set key center right } else { set yrange [0 : (hi > 0 ? 1.5 * hi : 1)] }
set xrange [-0.6 : K - 0.4]
if (K <= 20) { set xtics 1 }
set xlabel "class k" offset 0, 0.5
set ylabel "norm"
plot data u "class":"centred_mean_norm" w p pt 7 ps 1.2 lc rgb blue t "|M_k - μ_G| (class mean, centred)", \
     data u "class":"within_rms" w p pt 6 ps 1.2 lc rgb vermillion t "within-class RMS |x_i - M_k|"
unset label 101
unset logscale y
set format y "%g"
set key top right
# bottom: the cosines of the pairs (j, k), j < k, in the order of cosines.tsv
set tmargin at screen 0.45; set bmargin at screen bottom + 0.08
P = C_records
set xrange [0.5 : P + 0.5]
set xtics autofreq
if (P <= 15) { set xtics 1 }
cmin = (C_min < etf) ? C_min : etf
cmax = (C_max > etf) ? C_max : etf
pad = (cmax - cmin > 0) ? 0.35 * (cmax - cmin) : 0.1
set yrange [cmin - pad : cmax + pad]
set xlabel (P <= 15 ? "class pair (j, k), in the order (0,1), (0,2), ..., (1,2), ..." : "class pair (j, k), j < k, in order") offset 0, 0.5
set ylabel "cosine of centred means"
plot etf w l lc rgb black lw 1.5 dt 2 t sprintf("simplex ETF value -1/(K-1) = %.3g", etf), \
     cosines u (column(0) + 1):"cosine" w p pt 7 ps (P <= 200 ? 1.0 : 0.4) lc rgb blue t "cos(M_j - μ_G, M_k - μ_G)"
unset multiplot
