# Semi-private learning: test accuracy of Algorithm 1 against the PCA dimension k at
# epsilon in {0.1, 0.7, inf} (issue 12 figure 1 and figure 4; docs/semipriv.md "Does PCA help?").
# usage: gnuplot -c semipriv_k.gp TABLE.tsv OUT.png "TITLE LINE"
# TABLE.tsv: whitespace table, '#' comment lines, then ONE header line naming the columns
#   d n n_public eps k variant R acc acc_se diff diff_se cos cos_se xi_hat zeta
#   (bench/semipriv_study.c): d the dimension, n labelled points, n_public public points,
#   eps the privacy level as printed by %g ("0.1", "0.7", "inf"), k the PCA dimension (k = d:
#   no PCA), variant ("default" is the library's Noisy-SGD; other rows are ignored here), R
#   replicates, acc / acc_se the mean test accuracy and its SE, diff / diff_se the paired
#   difference acc(k) - acc(k = d), cos / cos_se the cosine of A w with w* (nan on files),
#   xi_hat the mean 1 - |A_hat A_hat^T w*|, zeta the hinge's margin scale.
# Points: mean +- 2 SE; the k = d point is the no-PCA baseline.
data = ARG1
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("%s\ntest accuracy ± 2 SE against the PCA dimension k (k = d: no PCA)", ARG3) font ",12"
set xlabel "PCA dimension k (public unlabelled data)"
set ylabel "test accuracy"
set logscale x
# log axis over one to three decades: 1-2-5 labels and minor tics
set format x "%g"
set xtics add (2, 5, 20, 50, 200, 500, 2000, 5000)
set mxtics 10
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set yrange [0.2:1.02]
set ytics 0.1
set grid xtics ytics mxtics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
# rows outside a series give NaN: skipped without breaking its line
set datafile missing NaN
set key bottom right opaque box lc rgb "#bbbbbb" font ",11"
sel(e) = (strcol("variant") eq "default" && strcol("eps") eq e) ? column("acc") : NaN
plot data u "k":(sel("inf")):(2*column("acc_se")) w yerrorlines pt 7 lw 2 lc rgb "#000000" t "ε = ∞ (non-private)", \
     data u "k":(sel("0.7")):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t "ε = 0.7", \
     data u "k":(sel("0.1")):(2*column("acc_se")) w yerrorlines pt 9 lw 2 lc rgb "#D55E00" t "ε = 0.1", \
     0.5 w l dt 2 lc rgb "#888888" t "chance"
