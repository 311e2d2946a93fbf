# The semi-private protocol (scripts/protocol_semipriv.sh; docs/protocols.md): DP-SGD test
# accuracy against the PCA dimension k (PCA on the public unlabelled split; k = d: no PCA), one
# curve per privacy level (seed 003, Figure 2).
# usage: gnuplot -c protocol_k.gp TABLE.tsv OUT.png DATASET D REPLICATES [NOTE]
# TABLE.tsv: '#' comment lines, then ONE header line naming the columns
#   k epsilon eta acc acc_se R noise_multiplier steps
#   (epsilon as printed: "0.1", "0.7", "inf"); k = D is the no-PCA baseline.
# The texts (DATASET, NOTE) are gnuplot string values, never parsed as code; an underscore in
# DATASET is shown as such (the scripts pass it as \_, the escape of enhanced text).
data = ARG1
D = ARG4 + 0
set terminal pngcairo size 960,680 font "sans,13"
set output ARG2
set title sprintf("%s: DP-SGD test accuracy ± 2 SE against the PCA dimension k (k = d = %d: no PCA)\nprivacy (ε, δ) = (0.1, 10^{-5}), (0.7, 10^{-5}) and non-private (ε = ∞)\nPCA on a public unlabelled 10 %% of the training rows; %s replicates%s", ARG3, D, ARG5, ARG6) font ",11"
set xlabel "PCA dimension k (log scale; the rightmost point is k = d, no PCA)"
set ylabel "test accuracy (10 classes)"
set logscale x
set format x "%g"
# ticks at the protocol's k values below d / 1.6 (closer ones would overprint the label of d)
set xtics ()
do for [kk in "10 20 40 80 160 320 640 1280 2560 5120"] { if (kk + 0 < D / 1.6) { set xtics add (kk kk + 0) } }
set xtics add (sprintf("d = %d", D) D)
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
set key above font ",10" maxrows 2 width 1
sel(e) = (strcol("epsilon") eq e) ? column("acc") : NaN
plot data u "k":(sel("inf")):(2*column("acc_se")) w yerrorlines pt 7 lw 2 lc rgb "#000000" t "non-private (ε = ∞)", \
     data u "k":(sel("0.7")):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t "ε = 0.7, δ = 10^{-5}", \
     data u "k":(sel("0.1")):(2*column("acc_se")) w yerrorlines pt 9 lw 2 lc rgb "#D55E00" t "ε = 0.1, δ = 10^{-5}", \
     chance w l dt 2 lc rgb "#888888" t (lo <= 0.12 ? "chance (0.1)" : "")
