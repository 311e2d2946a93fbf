# Neural collapse: the fixes of seed section 4 against p, accuracy of one-step NoisyGD with a
# training and test offset and small cube shifts (scripts/reproduce_nc.sh; docs/nc.md figure 4).
# usage: gnuplot -c nc_fixes.gp NC_FIXES.tsv OUT.png SEEDS MODE
# NC_FIXES.tsv columns: fix p sigma G test_error test_error_se pca_etf_residual pca_x_bound;
#   blocks (index): 0 raw, 1 normalize = center, 2 pca_k = 9, 3 pca_k = 50, 4 pca_k = 100
data = ARG1
seeds = ARG3
mode = ARG4 eq "quick" ? " (quick run)" : ""
set terminal pngcairo size 900,900 font "sans,13"
set output ARG2
set multiplot
set origin 0, 0.4
set size 1, 0.6
set title sprintf("the fixes of arXiv:2405.08920 §4: K = 10, n = 1000, (1, 10^{-4})-DP, one-step NoisyGD, CE; offset ‖ν‖_∞ = 0.1 on training\nand test points, cube shifts β = 0.01; PCA on n_{public} = 1000 public samples; simulation ± 2 SE over %s replicates%s", seeds, mode) font ",10"
set xlabel "feature dimension p"
set ylabel "test accuracy"
set logscale x
set format x "10^{%L}"
set xrange [7:1.5e5]
set yrange [-0.02:1.05]
set ytics 0.1
set grid
set key bottom left opaque box font ",10"
acc(e) = 1 - e
plot data index 0 u (column("p")*0.94):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorlines pt 7 ps 0.9 lc rgb "#000000" t "raw features", \
     data index 1 u (column("p")*0.97):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorlines pt 5 ps 0.8 lc rgb "#0072B2" t "normalize = center", \
     data index 2 u (column("p")*1.0):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorlines pt 9 ps 0.9 lc rgb "#009E73" t "pca\\_k = K − 1 = 9", \
     data index 3 u (column("p")*1.03):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorlines pt 11 ps 0.9 lc rgb "#E69F00" t "pca\\_k = 5K = 50", \
     data index 4 u (column("p")*1.06):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorlines pt 13 ps 0.9 lc rgb "#D55E00" t "pca\\_k = 10K = 100"
# bottom: why: the sensitivity G of each variant
set origin 0, 0
set size 1, 0.4
set title "the sensitivity G (noise σ = G × 3.19): PCA's bound adds β (Σ_j ‖p_j‖_1^2)^{1/2}, large for noisy directions" font ",10"
set logscale y
set yrange [0.5:100]
set ytics auto format "%g"
set ytics add (2, 5, 20, 50)
set mytics 10
set ylabel "G"
set key top left opaque box font ",9"
plot data index 0 u "p":"G" w lp pt 7 ps 0.8 lc rgb "#000000" t "raw", \
     data index 1 u "p":"G" w lp pt 5 ps 0.8 lc rgb "#0072B2" t "center", \
     data index 2 u "p":"G" w lp pt 9 ps 0.8 lc rgb "#009E73" t "pca\\_k = 9", \
     data index 3 u "p":"G" w lp pt 11 ps 0.8 lc rgb "#E69F00" t "pca\\_k = 50", \
     data index 4 u "p":"G" w lp pt 13 ps 0.8 lc rgb "#D55E00" t "pca\\_k = 100"
unset multiplot
