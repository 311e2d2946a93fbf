# Random features: test risk of DP-GD (best stopping time per p) and of the min-norm
# interpolator theta* = Phi^+ y against the number of features p (scripts/reproduce_rf.sh).
# usage: gnuplot -c rf_psweep.gp BEST.tsv STAR.tsv OUT.png N REPLICATES
# BEST.tsv columns: p eps ctime T sigma test test_se train clipped_final clipped_mean
#                   (one block per epsilon, blocks separated by two blank lines, each block
#                   opening with a row of these names: gnuplot reads them from the selected block)
# STAR.tsv columns: p theta_star_test theta_star_train (a row of these names, then the rows)
best = ARG1
star = ARG2
n = ARG4 + 0
reps = ARG5 + 0
set terminal pngcairo size 900,640 font "sans,13"
set output ARG3
# a short title above; the setting as a caption line below the plot
set title "Random features: private DP-GD against the interpolator θ*" font ",14"
set bmargin 6
set label 101 sprintf("d = 100, n = %d, sign target, tanh features. DP-GD: C_{clip} = 0.5√p, η = 1/p, δ = 1/n, best T ∈ {2d, 5d, 10d}.", n) \
  at screen 0.02, screen 0.065 left font ",10" tc rgb "#444444"
set label 102 sprintf("Mean ± 2 SE of %d independent replicates (each its own data, features and test set); θ*: mean over the same draws.", reps) \
  at screen 0.02, screen 0.03 left font ",10" tc rgb "#444444"
set xlabel "number of features p"
set ylabel "test risk (mean squared error)"
set logscale xy
set xrange [20:2e5]
set format x "10^{%L}"
set grid
set key top right opaque box lc rgb "#bbbbbb" font ",11"
set arrow from n, graph 0 to n, graph 1 nohead dt 3 lc rgb "#888888"
set label "p = n" at n, graph 0.04 offset 0.5, 0 tc rgb "#666666"
# The interpolation peak of theta* at p = n runs off the top: its value is printed instead.
stats star u (column("p") == n ? column("theta_star_test") : NaN) nooutput name "PEAK"
set yrange [0.3:4]
set ytics (0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 3, 4)
set label sprintf("θ* at p = n: %.3g ↑", PEAK_max) at n, 3.3 right offset -0.5, 0 tc rgb "#000000"
plot star u "p":"theta_star_test" w lp pt 6 ps 1.0 lc rgb "#000000" t "θ* = Φ^+y (no privacy)", \
     best index 0 u "p":"test":(2*column("test_se")) w yerrorlines pt 7 ps 0.8 lc rgb "#D55E00" t "DP-GD, ε = 1", \
     best index 1 u "p":"test":(2*column("test_se")) w yerrorlines pt 5 ps 0.8 lc rgb "#E69F00" t "DP-GD, ε = 2", \
     best index 2 u "p":"test":(2*column("test_se")) w yerrorlines pt 9 ps 0.9 lc rgb "#0072B2" t "DP-GD, ε = 4"
