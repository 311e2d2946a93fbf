# dpdyn simulate --model=nc: the test error of each class, simulated (mean ± 2 SE over
# replicates), and the error over all classes as a horizontal line (with a ± 2 SE band from
# replicates.tsv when the run saved it). The same script as nc_compare.gp, whose theory columns
# a simulate run does not have.
# usage: gnuplot -c nc_simulate.gp classes.tsv [replicates.tsv|classes.tsv] OUT [png|svg|pdf] [title] [caption]
# classes.tsv columns (by name): class test_count test_error test_error_se
#                                [theory_test_error theory_test_error_se]
# replicates.tsv columns (by name): replicate test_error [theory_test_error]
# dpdyn-figure: second=classes.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
reps = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11" top right
set border lw 1.2
# which columns the files have (simulate: no theory; replicates.tsv only when saved)
has_theory = 0; h = ""
do for [c = 1:12] { stats data every ::0::0 u (h = columnhead(c), 0) nooutput; if (h eq "theory_test_error") { has_theory = 1 } }
has_reps = (reps ne data)
okv(x) = (x == x) ? x : NaN
# standard errors: none with one replicate (nan); then the bars are left out
stats data u (strcol("test_error_se") eq "nan" ? 0 : 1) nooutput name "HS"
has_se = (HS_sum > 0)
S(c) = has_se ? column(c) : 0
stats data u "class" nooutput name "CL"
K = CL_records
# the error over all classes: the test counts weight the classes (as the summary's test_error)
stats data u (column("test_count") * column("test_error")) nooutput name "SW"
stats data u "test_count" nooutput name "SN"
overall = SW_sum / SN_sum
ovse = 0
if (has_reps) { stats reps u "test_error" nooutput name "R"; overall = R_mean; ovse = (R_records > 1) ? R_ssd / sqrt(R_records) : 0 }
th_ok = 0
if (has_theory) { stats data u (strcol("theory_test_error") eq "nan" ? 0 : 1) nooutput name "THN"; th_ok = (THN_sum > 0) }
if (th_ok) { stats data u "theory_test_error" nooutput name "TH" }
th_overall = NaN; thse = 0
if (th_ok) { stats data u (column("test_count") * column("theory_test_error")) nooutput name "TW"; th_overall = TW_sum / SN_sum }
if (th_ok && has_reps) { stats reps u "theory_test_error" nooutput name "RT"; th_overall = RT_mean; thse = (RT_records > 1) ? RT_ssd / sqrt(RT_records) : 0 }
# the y axis: logarithmic when every value is positive and they span a decade, else linear from 0
# (to 0.01 at least: errors of 1e-200 and 0 are both 0 there, and the key gives the values)
stats data u (column("test_error") + 2 * S("test_error_se")) nooutput name "HI"
stats data u "test_error" nooutput name "LO"
ymax = HI_max; ymin = LO_min
if (th_ok) { stats data u (okv(column("theory_test_error") + 2 * S("theory_test_error_se"))) nooutput name "THI"; ymax = (THI_max > ymax) ? THI_max : ymax; ymin = (TH_min < ymin) ? TH_min : ymin }
logy = (ymin > 0 && ymax / ymin >= 10)
if (logy) { set logscale y; set format y "10^{%L}"; set yrange [ymin / 2 : ymax * 6] } else { set format y "%g"; set yrange [0 : (1.45 * ymax > 0.01 ? 1.45 * ymax : 0.01)] }
set xrange [-0.6 : K - 0.4]
if (K <= 20) { set xtics 1 }
set xlabel "class k"
set ylabel "test error (misclassification rate)"
dx = (K <= 40 && th_ok) ? 0.12 : 0
lo(y, s) = (logy && y - s <= 0) ? y / 10 : y - s
# the ± 2 SE bands of the errors over all classes, behind the points
if (has_reps && has_se && ovse > 0) { set object 1 rect from graph 0, first lo(overall, 2 * ovse) to graph 1, first overall + 2 * ovse fc rgb sky fs transparent solid 0.3 noborder behind }
if (th_ok && has_reps && has_se && thse > 0) { set object 2 rect from graph 0, first lo(th_overall, 2 * thse) to graph 1, first th_overall + 2 * thse fc rgb orange fs transparent solid 0.25 noborder behind }
# the paired gap of the summary (gap, gap_se, gap_in_se): the mean and SE over replicates of
# sim_r - theory_r, both sides on replicate r's own training data and test points
if (th_ok && has_reps && has_se) { stats [*:*] [*:*] reps u (column("test_error") - column("theory_test_error")) nooutput name "GP"; gse = GP_ssd / sqrt(GP_records); set label 103 (gse > 0 ? sprintf("paired gap simulated - theory: %.3g ± %.2g (2 SE), %.2f SE", GP_mean, 2 * gse, GP_mean / gse) : sprintf("paired gap simulated - theory: %.3g (standard error 0)", GP_mean)) at graph 0.02, graph 0.04 left noenhanced font ",11" tc rgb black front }
ovt = has_reps && has_se ? sprintf("all classes, simulated: %.3g ± %.2g (2 SE)", overall, 2 * ovse) : sprintf("all classes, simulated: %.3g", overall)
tht = has_reps && has_se && thse > 0 ? sprintf("all classes, exact theory: %.3g ± %.2g (2 SE)", th_overall, 2 * thse) : sprintf("all classes, exact theory: %.3g%s", th_overall, has_reps && has_se ? " (every replicate)" : "")
THEORY = th_ok ? sprintf("%.17g w l lc rgb vermillion lw 1.5 dt 3 t '%s', data u (column(\"class\") + dx):\"theory_test_error\":(2 * S(\"theory_test_error_se\")) w yerrorbars pt 12 ps 1.3 lc rgb vermillion lw 1.2 t 'exact one-step error (notes B.5)%s', ", th_overall, tht, has_se ? ", mean ± 2 SE" : "") : ""
if (has_theory && !th_ok) { set label 102 "exact error not available for this run (summary.json: not_available)" at graph 0.02, graph 0.04 left noenhanced font ",10" tc rgb grey front }
SIM = has_se ? 'data u (column("class") - dx):"test_error":(2 * S("test_error_se")) w yerrorbars pt 7 ps 1.1 lc rgb blue lw 1.2 t "simulated NoisyGD, mean ± 2 SE"' : 'data u "class":"test_error" w p pt 7 ps 1.1 lc rgb blue t "simulated NoisyGD (one replicate)"'
plot overall w l lc rgb blue lw 1.5 dt 2 t ovt, @THEORY @SIM
