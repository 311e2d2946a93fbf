# Neural collapse: the papers' K-class formula (D.1 as printed) against the exact one-step error,
# the union bound and the simulation, balanced perfect collapse, K = 10, sigma = 10
# (scripts/reproduce_nc.sh; docs/nc.md figure 2).
# usage: gnuplot -c nc_kformula.gp NC_KFORMULA.tsv OUT.png SEEDS MODE
# NC_KFORMULA.tsv columns: K n test_error test_error_se theory_test_error bound_d1_printed
#   bound_d1_union gap_in_se
data = ARG1
seeds = ARG3
mode = ARG4 eq "quick" ? " (quick run)" : ""
set terminal pngcairo size 900,600 font "sans,13"
set output ARG2
set title sprintf("perfect collapse, balanced, K = 10, σ = 10, one step: the papers' K-class formula vs the exact error\nsimulation ± 2 SE over %s replicates × 1000 test points%s (a zero simulated error is not drawn)", seeds, mode) font ",10"
set xlabel "training samples n"
set ylabel "misclassification probability"
set logscale y
set format y "10^{%L}"
set yrange [1e-9:3]
set xrange [0:620]
set grid
set key bottom left opaque box font ",10"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 3 lc rgb "#888888"
# log axis: the lower end of a bar is clipped at 1e-9 when 2 SE exceeds the mean
lo(m, s) = (m - 2*s > 1e-9 ? m - 2*s : 1e-9)
plot data u "n":(column("test_error") > 0 ? column("test_error") : NaN):(lo(column("test_error"), column("test_error_se"))):(column("test_error") + 2*column("test_error_se")) w yerrorbars pt 7 ps 0.8 lc rgb "#000000" t "simulation (compare)", \
     data u "n":"theory_test_error" w l lw 2 lc rgb "#0072B2" t "exact one-step error", \
     data u "n":"bound_d1_union" w l lw 2 dt 2 lc rgb "#009E73" t "union bound (K-1) Φ(-n / (√2 (K-1) σ))", \
     data u "n":"bound_d1_printed" w l lw 2 dt 4 lc rgb "#D55E00" t "papers' formula D.1 as printed"
