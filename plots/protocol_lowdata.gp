# The semi-private protocol's low-data regime (scripts/protocol_semipriv.sh; docs/protocols.md):
# DP-SGD test accuracy against the fraction of the private rows trained on, for the best PCA
# dimension k of the k sweep and for k = d (no PCA) (seed 003, Figure 4).
# usage: gnuplot -c protocol_lowdata.gp TABLE.tsv OUT.png DATASET D KBEST REPLICATES [NOTE]
# TABLE.tsv: '#' comment lines, then ONE header line naming the columns
#   fraction k epsilon eta acc acc_se R n_trained
# The texts (DATASET, NOTE) are gnuplot string values, never parsed as code; an underscore in
# DATASET is shown as such (the scripts pass it as \_, the escape of enhanced text).
data = ARG1
D = ARG4 + 0
KB = ARG5 + 0
set terminal pngcairo size 960,680 font "sans,13"
set output ARG2
set title sprintf("%s: DP-SGD test accuracy ± 2 SE against the fraction of private rows trained on\nprivacy (ε, δ) = (0.7, 10^{-5}); PCA on a public unlabelled 10 %% of the training rows\n%s replicates (subset, split, sampling and noise redrawn)%s", ARG3, ARG6, ARG7) font ",11"
set xlabel "fraction of the private training rows used (log scale)"
set ylabel "test accuracy (10 classes)"
set logscale x
set format x "%g"
set xtics (0.05, 0.1, 0.25, 0.5, 0.75, 1)
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
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set datafile missing NaN
set key above font ",10" maxrows 2 width 1
sel(e, kk) = (strcol("epsilon") eq e && column("k") == kk) ? column("acc") : NaN
plot data u "fraction":(sel("0.7", KB)):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t sprintf("ε = 0.7, PCA k = %d", KB), \
     data u "fraction":(sel("0.7", D)):(2*column("acc_se")) w yerrorlines pt 4 lw 2 dt 2 lc rgb "#0072B2" t sprintf("ε = 0.7, k = d = %d (no PCA)", D), \
     chance w l dt 2 lc rgb "#888888" t (lo <= 0.12 ? "chance (0.1)" : "")
