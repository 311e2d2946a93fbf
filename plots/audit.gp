# dpdyn audit: the empirical trade-off of the test between the two neighbouring datasets (FPR,
# FNR at thresholds over every run, Clopper-Pearson intervals as error bars) against the Gaussian
# trade-off curves G_mu(a) = Phi(Phi^-1(1 - a) - mu) of the accountant's mu (upper bound), the
# fitted mu_hat and the mu lower bound; left linear axes, right both axes logarithmic (the tails
# where the epsilon bound comes from).
# usage: gnuplot -c audit.gp audit_tradeoff.tsv audit_curve.tsv OUT [png|svg|pdf] [title] [caption]
# audit_tradeoff.tsv columns: threshold fpr fpr_lo fpr_hi fnr fnr_lo fnr_hi fnr_gdp_upper fnr_gdp_hat
# audit_curve.tsv columns: fpr fnr_gdp_upper fnr_gdp_hat fnr_gdp_lower mu_upper mu_hat mu_lower
#   epsilon_upper epsilon_lower delta runs confidence
# dpdyn-figure: second=audit_curve.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
curve = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 1200; H = 640
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
# the run's constants (every row of audit_curve.tsv holds them)
stats curve u "mu_upper" nooutput name "MU"
stats curve u "mu_hat" nooutput name "MH"
stats curve u "mu_lower" nooutput name "ML"
stats curve u "epsilon_upper" nooutput name "EU"
stats curve u "epsilon_lower" nooutput name "EL"
stats curve u "delta" nooutput name "DL"
stats curve u "runs" nooutput name "RN"
stats curve u "confidence" nooutput name "CF"
pos(x) = (x > 0) ? x : NaN
# the log panel's ranges: the smallest positive FPR and TPR, halved
stats data u (pos(column("fpr"))) nooutput name "FX"
stats data u (pos(1 - column("fnr"))) nooutput name "FY"
xmin = FX_min / 2
ymin = FY_min / 2
set multiplot
if (ARGC >= 5) { set label 100 ARG5 at screen 0.5, screen 0.965 center noenhanced font ",14" }
set label 102 sprintf("upper bound: μ = %.3g (ε = %.3g at δ = %.2g);  audit: μ̂ = %.3g, μ ≥ %.3g, ε ≥ %.3g  (%.0f runs per side, %.3g confidence)", MU_max, EU_max, DL_max, MH_max, ML_max, EL_max, RN_max, CF_max) at screen 0.5, screen 0.915 center noenhanced font ",11"
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.03 left noenhanced font ",9" tc rgb "#444444" }
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",10"
set border lw 1.2
set xlabel "false-positive rate (FPR)"
set ylabel "false-negative rate (FNR)"
set bars small
# ---- left: linear axes, the points under the curves
set size 0.5, 0.8
set origin 0.0, 0.08
set xrange [0:1]
set yrange [0:1]
set key top right
plot data u "fpr":"fnr":"fpr_lo":"fpr_hi":"fnr_lo":"fnr_hi" w xyerrorbars pt 7 ps 0.35 lc rgb grey t "empirical (FPR, FNR), CP intervals", \
     1 - x w l lc rgb black dt 2 t "1 − FPR (no privacy)", \
     curve u "fpr":"fnr_gdp_upper" w l lc rgb vermillion lw 2.5 t sprintf("G_μ, μ = %.3g (accountant)", MU_max), \
     curve u "fpr":"fnr_gdp_hat" w l lc rgb blue lw 2 dt 4 t sprintf("G_μ, μ̂ = %.3g (fitted)", MH_max), \
     curve u "fpr":"fnr_gdp_lower" w l lc rgb green lw 2 dt 3 t sprintf("G_μ, μ = %.3g (lower bound)", ML_max)
# ---- right: the ROC in log-log axes, TPR = 1 - FNR against FPR (the tails, where the
# epsilon bound comes from: there ln(TPR/FPR) approaches epsilon)
unset label 100; unset label 101; unset label 102
set origin 0.5, 0.08
set logscale xy
set format x "10^{%L}"; set format y "10^{%L}"
set ylabel "true-positive rate (TPR = 1 − FNR)"
set xrange [xmin:1]
set yrange [ymin:1.5]
set key bottom right
plot data u (pos(column("fpr"))):(pos(1 - column("fnr"))):(pos(column("fpr_lo"))):"fpr_hi":(pos(1 - column("fnr_hi"))):(1 - column("fnr_lo")) w xyerrorbars pt 7 ps 0.35 lc rgb grey t "empirical", \
     x w l lc rgb black dt 2 t "TPR = FPR (no privacy)", \
     curve u "fpr":(pos(1 - column("fnr_gdp_upper"))) w l lc rgb vermillion lw 2.5 t "accountant", \
     curve u "fpr":(pos(1 - column("fnr_gdp_hat"))) w l lc rgb blue lw 2 dt 4 t "fitted", \
     curve u "fpr":(pos(1 - column("fnr_gdp_lower"))) w l lc rgb green lw 2 dt 3 t "lower bound"
unpos(x) = (x > 0) ? x : NaN
# the log panel's ranges: the smallest positive FPR and TPR, halved
stats data u (pos(column("fpr"))) nooutput name "FX"
stats data u (pos(1 - column("fnr"))) nooutput name "FY"
xmin = FX_min / 2
ymin = FY_min / 2
set multiplot
