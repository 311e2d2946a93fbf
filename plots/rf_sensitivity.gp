# dpdyn sensitivity --model=rf: the sensitivity S(x) = |x| |grad_x f(x; theta)| at fresh test
# points, mean +- 2 SE over replicates (bars: the 10-90 % quantiles of the mean replicate),
# for the min-norm interpolator theta* and for DP-GD's last iterate, against n (or p), with the
# fitted power laws; both axes logarithmic.
# usage: gnuplot -c rf_sensitivity.gp sensitivity.tsv sensitivity.tsv OUT [png|svg|pdf] [title] [caption]
# sensitivity.tsv columns: x n p d sensitivity_mean sensitivity_mean_se sensitivity_q10
#   sensitivity_q50 sensitivity_q90 dpgd_mean dpgd_mean_se dpgd_q10 dpgd_q50 dpgd_q90
#   theta_star_test_risk dpgd_test_risk sigma epsilon fit fit_dpgd
# dpdyn-figure: second=sensitivity.tsv (embedded in dpdyn; the second data file it reads, ARG2)
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
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" } else { set title "random features: sensitivity |x| |∇_x f(x)| at test points" font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key top left opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
set logscale xy
set autoscale xfix
set offsets graph 0.06, graph 0.06, 0, 0
# the varied size: n when the p column changes less than n, else p
stats data u "n" nooutput name "N"
stats data u "p" nooutput name "P"
varyp = (N_max == N_min && P_max > P_min)
set xlabel (varyp ? "number of features p (n fixed)" : "training samples n")
set ylabel "sensitivity S(x) = |x| |∇_x f(x)|"
set mxtics 10
# the fitted exponents, from the fitted lines' ends
stats data u (log(column("x"))) nooutput name "LX"
stats data u ((strcol("fit") eq "nan") ? 0 : 1) nooutput name "FT"
LF_max = 0; LF_min = 0; LF_index_max = 0; LF_index_min = 0
if (FT_sum > 0) { stats data u (log(column("fit"))) nooutput name "LF" }
# DP-GD's columns are nan with dpgd = off
stats data u ((strcol("dpgd_mean") eq "nan") ? 0 : 1) nooutput name "DG"
LD_max = 0; LD_min = 0; LD_index_max = 0; LD_index_min = 0
has_dp = (DG_sum > 0)
if (has_dp && FT_sum > 0) { stats data u (log(column("fit_dpgd"))) nooutput name "LD" }
# one size: a range around it
if (LX_max == LX_min) { set xrange [exp(LX_min) / 1.5:exp(LX_min) * 1.5] }
bstar = (FT_sum > 0 && LX_max > LX_min) ? (LF_max - LF_min) / (LX_max - LX_min) * ((LF_index_max > LF_index_min) ? 1 : -1) : 0
bdp = (has_dp && FT_sum > 0 && LX_max > LX_min) ? (LD_max - LD_min) / (LX_max - LX_min) * ((LD_index_max > LD_index_min) ? 1 : -1) : 0
xname = varyp ? "p" : "n"
plot data u "x":"sensitivity_mean":"sensitivity_q10":"sensitivity_q90":xtic(sprintf("%g", column("x"))) w yerrorbars pt 7 ps 1.2 lw 1.5 lc rgb blue t "θ* (min-norm interpolator): mean, 10-90 % range", \
     data u "x":"fit" w l lw 2 dt 2 lc rgb blue t sprintf("fitted power law (θ*): S ∝ %s^{%.3f}", xname, bstar), \
     data u "x":(has_dp ? column("dpgd_mean") : NaN):(has_dp ? column("dpgd_q10") : NaN):(has_dp ? column("dpgd_q90") : NaN) w yerrorbars pt 5 ps 1.0 lw 1.5 lc rgb vermillion t (has_dp ? "DP-GD last iterate: mean, 10-90 % range" : ""), \
     data u "x":(has_dp ? column("fit_dpgd") : NaN) w l lw 2 dt 2 lc rgb vermillion t (has_dp ? sprintf("fitted power law (DP-GD): S ∝ %s^{%.3f}", xname, bdp) : "")
