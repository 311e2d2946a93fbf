# Semi-private learning: test accuracy and the estimated subspace's xi_k against the number of
# public unlabelled points n_public, at k = 5 (issue 12 figure 3; docs/semipriv.md).
# usage: gnuplot -c semipriv_npublic.gp TABLE.tsv OUT.png "TITLE LINE"
# TABLE.tsv: the columns of semipriv_k.gp (one header line: d n n_public eps k variant R acc
#   acc_se diff diff_se cos cos_se xi_hat zeta), rows for several n_public at one k; only
#   variant "default" is drawn; xi_hat = mean 1 - |A_hat A_hat^T w*| (population: 1 - a).
data = ARG1
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("%s\ntest accuracy ± 2 SE (left) and ξ_k of the estimated subspace (right) against n_{public}", ARG3) font ",12"
set xlabel "public unlabelled points n_{public}"
set ylabel "test accuracy"
set y2label "ξ_k of span(Â_k) = 1 - |Â Â^T w*|"
set logscale x
# log axis over one to three decades: 1-2-5 labels and minor tics
set format x "%g"
set xtics add (2, 5, 20, 50, 200, 500, 2000, 5000)
set mxtics 10
set yrange [0.3:1.02]
set ytics 0.1 nomirror
set y2range [0:1]
set y2tics 0.1
set grid xtics ytics mxtics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
# rows outside a series give NaN: skipped without breaking its line
set datafile missing NaN
set key at graph 0.98, graph 0.27 right opaque box lc rgb "#bbbbbb" font ",11"
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
sel(e) = (strcol("variant") eq "default" && strcol("eps") eq e) ? column("acc") : NaN
selx(e) = (strcol("variant") eq "default" && strcol("eps") eq e) ? column("xi_hat") : NaN
plot data u "n_public":(sel("inf")):(2*column("acc_se")) w yerrorlines pt 7 lw 2 lc rgb "#000000" t "accuracy, ε = ∞", \
     data u "n_public":(sel("0.7")):(2*column("acc_se")) w yerrorlines pt 5 lw 2 lc rgb "#0072B2" t "accuracy, ε = 0.7", \
     data u "n_public":(selx("inf")) axes x1y2 w lp pt 6 lw 1 dt 2 lc rgb "#009E73" t "ξ_k of Â_k (right axis)", \
     0.5 w l dt 2 lc rgb "#888888" t "chance"
