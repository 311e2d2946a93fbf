# Semi-private learning: test accuracy against the number n of labelled points for k = 5 and
# k = d (no PCA) at epsilon = 0.1 and 0.7 (issue 12 figure 2; docs/semipriv.md).
# usage: gnuplot -c semipriv_n.gp TABLE.tsv OUT.png "TITLE LINE" D
# TABLE.tsv: the columns of semipriv_k.gp (one header line: d n n_public eps k variant R acc
#   acc_se diff diff_se cos cos_se xi_hat zeta), rows for several n; only variant "default" is
#   drawn. D: the dimension (the k = d rows).
data = ARG1
D = ARG4 + 0
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("%s\ntest accuracy ± 2 SE against the labelled sample size n (T = n^2 Noisy-SGD steps)", ARG3) font ",12"
set xlabel "labelled points n"
set ylabel "test accuracy"
set logscale x
# log axis over one to three decades: 1-2-5 labels and minor tics
set format x "%g"
set xtics add (2, 5, 20, 50, 200, 500, 2000, 5000)
set mxtics 10
set xrange [80:2500]
set yrange [0.3:1.02]
set ytics 0.1
set grid xtics ytics mxtics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
# rows outside a series give NaN: skipped without breaking its line
set datafile missing NaN
set key bottom right opaque box lc rgb "#bbbbbb" font ",11"
sel(e, kk) = (strcol("variant") eq "default" && strcol("eps") eq e && column("k") == kk) ? column("acc") : NaN
plot data u "n":(sel("0.7", 5)):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t "ε = 0.7, k = 5", \
     data u "n":(sel("0.7", D)):(2*column("acc_se")) w yerrorlines pt 4 lw 2 dt 2 lc rgb "#0072B2" t sprintf("ε = 0.7, k = d = %d", D), \
     data u "n":(sel("0.1", 5)):(2*column("acc_se")) w yerrorlines pt 9 lw 2 lc rgb "#D55E00" t "ε = 0.1, k = 5", \
     data u "n":(sel("0.1", D)):(2*column("acc_se")) w yerrorlines pt 8 lw 2 dt 2 lc rgb "#D55E00" t sprintf("ε = 0.1, k = d = %d", D), \
     0.5 w l dt 2 lc rgb "#888888" t "chance"
