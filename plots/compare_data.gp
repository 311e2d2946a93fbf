# dpdyn compare on a dataset (features=file:, docs/real_data.md): DP-SGD on the rows (mean +- 2 SE)
# against the deterministic equivalent built from the data's spectrum with the published Gaussian
# clipping factors and with the rows' own (data-driven) factors; the released iterate of each;
# below, each equivalent's signed gap (sim. - theory) / SE, dashed lines at +-3 (its absolute
# value is the gap_in_se column of the table, whose largest is the summary's sup_gap_in_se).
# usage: gnuplot -c compare_data.gp trajectory.tsv release.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t excess_risk excess_risk_se ode_gaussian_excess_risk
#                         ode_data_excess_risk (others ignored)
# release.tsv columns:    t after after_se ode_gaussian_after ode_data_after (others ignored)
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; grey = "#666666"
black = "#000000"
W = 900; H = 720
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11" top right
set border lw 1.2
set lmargin at screen 0.11
set rmargin at screen 0.97
two = (ARGC >= 5) ? (strstrt(ARG5, "\n") > 0) : 0
top = two ? 0.885 : 0.925
if (ARGC >= 5) { set label 100 ARG5 at screen 0.54, screen (two ? 0.972 : 0.965) center noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444" }
pos(x) = (x > 0) ? x : NaN
# the y range: the simulation band, both equivalents and the released values, with room for the key
stats data u (pos(column("excess_risk") - 2 * column("excess_risk_se"))) nooutput name "A"
stats data u (column("excess_risk") + 2 * column("excess_risk_se")) nooutput name "B"
stats data u "ode_gaussian_excess_risk" nooutput name "G"
stats data u "ode_data_excess_risk" nooutput name "D"
stats release u (pos(column("after") - 2 * column("after_se"))) nooutput name "RA"
stats release u (column("after") + 2 * column("after_se")) nooutput name "RB"
stats release u "ode_gaussian_after" nooutput name "RG"
stats release u "ode_data_after" nooutput name "RD"
min2(a, b) = (a < b) ? a : b
max2(a, b) = (a > b) ? a : b
ylo = min2(min2(min2(A_min, G_min), min2(D_min, RA_min)), min2(RG_min, RD_min))
yhi = max2(max2(max2(B_max, G_max), max2(D_max, RB_max)), max2(RG_max, RD_max))
span = log10(yhi / ylo)
span = (span < 0.05) ? 0.05 : span
ymin = ylo / 10**(0.06 * span)
ymax = yhi * 10**(0.55 * span)
res(m, s, o) = (s > 0) ? (m - o) / s : NaN
stats data u (abs(res(column("excess_risk"), column("excess_risk_se"), column("ode_gaussian_excess_risk")))) nooutput name "R1"
stats data u (abs(res(column("excess_risk"), column("excess_risk_se"), column("ode_data_excess_risk")))) nooutput name "R2"
rmax = max2(R1_max, R2_max)
rlim = (rmax * 1.15 > 4.5) ? rmax * 1.15 : 4.5
set multiplot
set tmargin at screen top
set bmargin at screen 0.415
set xrange [0:1.08]
set format x ""
set ylabel "excess risk on the data"
set logscale y
set yrange [ymin:ymax]
set mytics 10
if (span < 2.5) { set format y "%g"; do for [e = -15:5] { set ytics add (2 * 10.0**e, 5 * 10.0**e) } } else { set format y "10^{%L}" }
plot data u "t":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w filledcurves lc rgb sky fs transparent solid 0.45 border lc rgb blue t "DP-SGD on the rows, mean ± 2 SE", \
     data u "t":"excess_risk" w l lc rgb blue lw 1.5 notitle, \
     release u (column("t") + 0.015):"after":(2 * column("after_se")) w yerrorbars pt 7 ps 1 lw 1.5 lc rgb blue t "DP-SGD released ± 2 SE", \
     data u "t":"ode_gaussian_excess_risk" w l lc rgb vermillion lw 2.5 dt 2 t "equivalent, Gaussian factors (published)", \
     release u (column("t") + 0.035):"ode_gaussian_after" w p pt 9 ps 1.6 lc rgb vermillion t "  its released value", \
     data u "t":"ode_data_excess_risk" w l lc rgb green lw 2.5 dt 4 t "equivalent, data-driven factors", \
     release u (column("t") + 0.055):"ode_data_after" w p pt 5 ps 1.3 lc rgb green t "  its released value"
unset label 100
unset label 101
set tmargin at screen 0.395
set bmargin at screen 0.18
unset logscale y
set format y "%g"
if (rlim < 8) { set ytics 3 } else { set ytics auto }
set mytics default
set format x "%g"
set xlabel "t = k / n"
set ylabel "(sim. − theory) / SE\n(dashed: ±3)"
set yrange [-rlim:rlim]
set key top left horizontal font ",10"
set arrow 1 from 0, 3 to 1.08, 3 nohead dt 2 lc rgb grey lw 1.2
set arrow 2 from 0, -3 to 1.08, -3 nohead dt 2 lc rgb grey lw 1.2
set arrow 3 from 0, 0 to 1.08, 0 nohead lc rgb black lw 0.8
plot data u "t":(res(column("excess_risk"), column("excess_risk_se"), column("ode_gaussian_excess_risk"))) w lp pt 9 ps 0.6 lw 1.2 lc rgb vermillion t "Gaussian factors", \
     data u "t":(res(column("excess_risk"), column("excess_risk_se"), column("ode_data_excess_risk"))) w lp pt 5 ps 0.5 lw 1.2 lc rgb green t "data-driven factors"
unset multiplot
