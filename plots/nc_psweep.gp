# Neural collapse: one-step NoisyGD test error against the feature dimension p at fixed privacy,
# perfect collapse and cube training shifts (scripts/reproduce_nc.sh; docs/nc.md figure 1).
# usage: gnuplot -c nc_psweep.gp NC_PSWEEP.tsv OUT.png SEEDS MODE
# NC_PSWEEP.tsv columns: beta p sigma G test_error test_error_se theory_test_error
#   bound_d1_printed bound_d1_union gap_in_se wall_seconds; blocks (index): 0 perfect collapse,
#   1-3 cube beta = 0.01, 0.03, 0.1
data = ARG1
seeds = ARG3
mode = ARG4 eq "quick" ? " (quick run)" : ""
set terminal pngcairo size 900,900 font "sans,13"
set output ARG2
set multiplot
# top: the error itself (simulation +- 2 SE and the exact one-step error)
set origin 0, 0.4
set size 1, 0.6
set title sprintf("neural collapse, one-step NoisyGD: K = 10, n = 1000, (1, 10^{-4})-DP (GDP calibration), CE\nsimulation ± 2 SE over %s replicates × 1000 test points%s; lines: exact one-step error", seeds, mode) font ",10"
set xlabel "feature dimension p"
set ylabel "test misclassification rate"
set logscale x
set format x "10^{%L}"
set xrange [7:1.5e6]
set yrange [-0.03:1]
set ytics 0.1
set grid
set key top left opaque box font ",10"
plot data index 0 u "p":"test_error":(2*column("test_error_se")) w yerrorbars pt 7 ps 0.9 lc rgb "#000000" t "perfect collapse: simulation", \
     data index 0 u "p":"theory_test_error" w l lw 2 dt 2 lc rgb "#000000" t "perfect collapse: exact", \
     data index 1 u "p":"test_error":(2*column("test_error_se")) w yerrorbars pt 5 ps 0.8 lc rgb "#0072B2" t "cube, β = 0.01: simulation", \
     data index 1 u "p":"theory_test_error" w l lw 2 lc rgb "#0072B2" t "cube, β = 0.01: exact", \
     data index 2 u "p":"test_error":(2*column("test_error_se")) w yerrorbars pt 9 ps 0.9 lc rgb "#E69F00" t "cube, β = 0.03: simulation", \
     data index 2 u "p":"theory_test_error" w l lw 2 lc rgb "#E69F00" t "cube, β = 0.03: exact", \
     data index 3 u "p":"test_error":(2*column("test_error_se")) w yerrorbars pt 13 ps 0.9 lc rgb "#CC79A7" t "cube, β = 0.1: simulation", \
     data index 3 u "p":"theory_test_error" w l lw 2 lc rgb "#CC79A7" t "cube, β = 0.1: exact"
# bottom: the exact error and the papers' D.1 bounds (perfect collapse only) on a log axis
set origin 0, 0
set size 1, 0.4
set title "the same exact one-step errors on a log axis, with the papers' perfect-collapse bounds (D.1)" font ",10"
set logscale y
set yrange [1e-300:10]
set ytics 1e-300, 1e50, 1 format "10^{%L}"
set ylabel "probability"
set key at graph 0.02, graph 0.45 left top opaque box font ",9"
plot data index 0 u "p":"theory_test_error" w l lw 2 dt 2 lc rgb "#000000" t "perfect collapse: exact", \
     data index 0 u "p":"bound_d1_union" w p pt 6 ps 1 lc rgb "#009E73" t "perfect: union bound (K-1) Φ(-n/(√2(K-1)σ))", \
     data index 0 u "p":"bound_d1_printed" w lp pt 4 ps 0.8 dt 4 lc rgb "#666666" t "perfect: D.1 as printed", \
     data index 1 u "p":"theory_test_error" w l lw 2 lc rgb "#0072B2" t "cube, β = 0.01", \
     data index 2 u "p":"theory_test_error" w l lw 2 lc rgb "#E69F00" t "cube, β = 0.03", \
     data index 3 u "p":"theory_test_error" w l lw 2 lc rgb "#CC79A7" t "cube, β = 0.1"
unset multiplot
