# The neural-collapse protocol (scripts/protocol_nc.sh; docs/protocols.md): test accuracy of the
# last layer trained by DP-SGD (10 epochs) against the feature dimension p, varied by random
# subsets (p < p0) and by copies (p > p0) of the coordinates, on clean test features and on test
# features perturbed by N(0, 0.1) per coordinate (seed 000 section 5.2, Figure 2(b)).
# usage: gnuplot -c protocol_nc.gp TABLE.tsv OUT.png DATASET P0 REPLICATES [NOTE]
# TABLE.tsv: '#' comment lines, then ONE header line naming the columns
#   p resize epsilon eta shift acc acc_se R noise_multiplier clipped_fraction w_norm nc1
#   trace_ratio beta_median x_norm_max (the collapse diagnostics of the resized training rows)
#   (epsilon "1" or "inf"; shift "none" or "gaussian"), rows sorted by p.
# The texts (DATASET, NOTE) are gnuplot string values, never parsed as code; an underscore in
# DATASET is shown as such (the scripts pass it as \_, the escape of enhanced text).
data = ARG1
P0 = ARG4 + 0
set terminal pngcairo size 960,680 font "sans,13"
set output ARG2
set title sprintf("%s: test accuracy ± 2 SE against the feature dimension p (DP-SGD, 10 epochs)\np < %d: random subsets of the coordinates, p > %d: copies of them\nprivacy (ε, δ) = (1, 10^{-4}) or non-private (ε = ∞); %s replicates%s", ARG3, P0, P0, ARG5, ARG6) font ",11"
set xlabel "feature dimension p (log scale)"
set ylabel "test accuracy (10 classes)"
set logscale x
set format x "%g"
# ticks at the protocol's p values: p0/8 .. 8 p0
set xtics ()
do for [m in "8 4 2"] { if (P0 / (m + 0) >= 1) { set xtics add (sprintf("%d", P0 / (m + 0)) P0 / (m + 0.0)) } }
do for [m in "2 4 8"] { set xtics add (sprintf("%d", P0 * (m + 0)) P0 * (m + 0)) }
set xtics add (sprintf("p_0 = %d", P0) P0)
set mxtics 10
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
# y: the range of the data (with room for the error bars); the chance line is named only when
# it is in that range
stats data u (column("acc") - 2 * column("acc_se")) nooutput
lo = STATS_min - 0.02
stats data u (column("acc") + 2 * column("acc_se")) nooutput
hi = STATS_max + 0.02
lo = lo < 0 ? 0 : lo
hi = hi > 1.02 ? 1.02 : hi
set yrange [lo:hi]
chance = 0.1
set grid xtics ytics mxtics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set datafile missing NaN
set arrow from P0, graph 0 to P0, graph 1 nohead dt 3 lc rgb "#888888"
set key above font ",10" maxrows 2 width 1
sel(e, s) = (strcol("epsilon") eq e && strcol("shift") eq s) ? column("acc") : NaN
plot data u "p":(sel("inf", "none")):(2*column("acc_se")) w yerrorlines pt 7 lw 2 lc rgb "#000000" t "non-private, clean test", \
     data u "p":(sel("inf", "gaussian")):(2*column("acc_se")) w yerrorlines pt 6 lw 2 dt 2 lc rgb "#000000" t "non-private, test + N(0, 0.1)", \
     data u "p":(sel("1", "none")):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#D55E00" t "(1, 10^{-4})-DP, clean test", \
     data u "p":(sel("1", "gaussian")):(2*column("acc_se")) w yerrorlines pt 4 lw 2 dt 2 lc rgb "#D55E00" t "(1, 10^{-4})-DP, test + N(0, 0.1)", \
     chance w l dt 2 lc rgb "#888888" t (lo <= 0.12 ? "chance (0.1)" : "")
