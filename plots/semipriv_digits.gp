# Semi-private learning on real features: test accuracy of Algorithm 1 against the PCA dimension
# k on a class pair of the scikit-learn digits (scripts/semipriv_digits.py; issue 12 figure 4;
# docs/semipriv.md "Real data").
# usage: gnuplot -c semipriv_digits.gp TABLE.tsv OUT.png "TITLE LINE"
# TABLE.tsv: the columns of semipriv_k.gp (one header line: d n n_public eps k variant R acc
#   acc_se diff diff_se cos cos_se xi_hat zeta); eps as printed by %g, drawn for "0.1", "0.7",
#   "3", "10" and "inf" (other levels are ignored); only variant "default" is drawn. The data are
#   fixed: the replicates redraw the Noisy-SGD noise and sampling only, so the SE is that of
#   the noise, not of the data.
data = ARG1
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("%s\ntest accuracy ± 2 SE (noise redrawn, data fixed) against the PCA dimension k (k = d: no PCA)", ARG3) font ",12"
set xlabel "PCA dimension k (public unlabelled images)"
set ylabel "test accuracy"
set logscale x
# log axis over one to three decades: 1-2-5 labels and minor tics
set format x "%g"
set xtics add (2, 5, 20, 50, 200, 500, 2000, 5000)
set mxtics 10
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set yrange [0.3:1.02]
set key bottom right opaque box lc rgb "#bbbbbb" font ",11"
set ytics 0.1
set grid xtics ytics mxtics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
# rows outside a series give NaN: skipped without breaking its line
set datafile missing NaN
set key bottom right opaque box lc rgb "#bbbbbb" font ",11"
sel(e) = (strcol("variant") eq "default" && strcol("eps") eq e) ? column("acc") : NaN
plot data u "k":(sel("inf")):(2*column("acc_se")) w yerrorlines pt 7 lw 2 lc rgb "#000000" t "ε = ∞ (non-private)", \
     data u "k":(sel("10")):(2*column("acc_se")) w yerrorlines pt 13 lw 2 lc rgb "#009E73" t "ε = 10", \
     data u "k":(sel("3")):(2*column("acc_se")) w yerrorlines pt 11 lw 2 lc rgb "#E69F00" t "ε = 3", \
     data u "k":(sel("0.7")):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t "ε = 0.7", \
     data u "k":(sel("0.1")):(2*column("acc_se")) w yerrorlines pt 9 lw 2 lc rgb "#D55E00" t "ε = 0.1", \
     0.5 w l dt 2 lc rgb "#888888" t "chance"
