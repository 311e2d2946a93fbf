# Neural collapse: the seed's synthetic section 5.2, accuracy of one-step NoisyGD against p at
# K = 10, n = 1e4, (1, 1e-4)-DP (scripts/reproduce_nc.sh; docs/nc.md figure 3).
# usage: gnuplot -c nc_sec52.gp NC_SEC52.tsv OUT.png SEEDS MODE
# NC_SEC52.tsv columns: setting p sigma G test_error test_error_se theory_test_error gap_in_se
#   wall_seconds; blocks (index): 0 perfect, 1 imbalance, 2 imbalance + offset, 3 test perturbation
data = ARG1
seeds = ARG3
mode = ARG4 eq "quick" ? " (quick run)" : ""
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("arXiv:2405.08920 §5.2 (synthetic collapse): K = 10, n = 10^4, (1, 10^{-4})-DP, one-step NoisyGD, CE\naccuracy, simulation ± 2 SE over %s replicates × 1000 test points%s; lines: exact one-step", seeds, mode) font ",10"
set xlabel "feature dimension p"
set ylabel "test accuracy"
set logscale x
set format x "10^{%L}"
set xrange [5:2e6]
set yrange [0.88:1.005]
set grid
set key bottom left opaque box font ",10"
acc(e) = 1 - e
plot data index 0 u (column("p")*0.93):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorbars pt 7 ps 0.9 lc rgb "#000000" t "perfect collapse", \
     data index 1 u (column("p")*0.97):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorbars pt 5 ps 0.8 lc rgb "#0072B2" t "imbalance 9:1 (5 × 1800 + 5 × 200)", \
     data index 1 u "p":(acc(column("theory_test_error"))) w l lw 2 dt 2 lc rgb "#0072B2" t "perfect and imbalance: exact", \
     data index 2 u (column("p")*1.03):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorbars pt 9 ps 0.9 lc rgb "#E69F00" t "imbalance + training offset ‖ν‖_∞ = 0.1", \
     data index 2 u "p":(acc(column("theory_test_error"))) w l lw 2 lc rgb "#E69F00" t "imbalance + offset: exact", \
     data index 3 u (column("p")*1.07):(acc(column("test_error"))):(2*column("test_error_se")) w yerrorbars pt 13 ps 0.9 lc rgb "#D55E00" t "test perturbation, Rademacher β_{test} = 0.1", \
     data index 3 u "p":(acc(column("theory_test_error"))) w l lw 2 dt 4 lc rgb "#D55E00" t "test perturbation: exact (conditionally)"
