# Random features: DP-GD test risk over the clipping constant C_clip / sqrt(p) and the
# continuous time tau = eta T at fixed p, one panel per epsilon (scripts/reproduce_rf.sh).
# usage: gnuplot -c rf_heatmap.gp HEATMAP.tsv OUT.png P REPLICATES
# HEATMAP.tsv columns: eps clip ctime T sigma test test_se train clipped_final clipped_mean
#                      (one block per epsilon: scans over clip separated by one blank line,
#                      blocks by two); tau = ctime d / p with d = 100.
data = ARG1
p = ARG3 + 0
reps = ARG4 + 0
set terminal pngcairo size 1500,560 font "sans,11"
set output ARG2
# a short title above; the setting as a caption line below the panels
set label 101 sprintf("d = 100, n = 2000, p = %d, sign target, tanh features, η = 1/p, δ = 1/n. Colour: mean test risk of %d independent replicates per cell (each its own data, features and test set), log scale; + marks the best cell.", p, reps) \
  at screen 0.01, screen 0.03 left font ",10" tc rgb "#444444"
set multiplot layout 1,3 title sprintf("Random features: DP-GD test risk over clipping and training time (p = %d)", p) font ",14" margins 0.05, 0.92, 0.17, 0.86 spacing 0.05
set logscale cb
set xlabel "log_{10} (C_{clip} / √p)"
set ylabel "log_{10} τ,  τ = η T"
set cblabel "test risk"
set cbrange [0.35:3]
set cbtics ("0.4" 0.4, "0.5" 0.5, "0.7" 0.7, "1" 1, "1.5" 1.5, "2" 2, "≥ 3" 3)
set palette defined (0 "#0c2c84", 1 "#225ea8", 2 "#41b6c4", 3 "#c7e9b4", 4 "#ffffd9", 5 "#fdae61", 6 "#d7191c")
tau(c) = c * 100.0 / p
do for [k = 0:2] {
  stats data index k u "test" nooutput name "R"
  stats data index k u (column("test") == R_min ? column("clip") : NaN) nooutput name "BX"
  stats data index k u (column("test") == R_min ? tau(column("ctime")) : NaN) nooutput name "BY"
  eps = (k == 0) ? 1 : (k == 1) ? 2 : 4
  set title sprintf("ε = %d: best %.3f at C/√p = %.3g, τ = %.3g", eps, R_min, BX_min, BY_min) font ",10"
  # one colour bar, right of the last panel (the same range in all three)
  if (k < 2) { unset colorbox; unset cblabel } else { set colorbox; set cblabel "test risk" }
  if (k > 0) { unset ylabel }
  plot data index k u (log10(column("clip"))):(log10(tau(column("ctime")))):"test" w image notitle, \
       data index k u (column("test") == R_min ? log10(column("clip")) : NaN):(log10(tau(column("ctime")))) w p pt 1 ps 3 lw 3 lc rgb "#ffffff" notitle
}
unset multiplot
