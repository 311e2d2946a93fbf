# Rates study (scripts/rates.sh): the tuned released excess risk R_out of the three schedule
# families of arXiv:2505.16329 against gamma = d/n, and R_out compensated by gamma + gamma^2/rho^2.
# usage: gnuplot -c rates.gp rates_rhoRHO.tsv OUT.png RHO ZETA K_OPT K_CONST K_SQRT A B
# (K_*: constants of the rate shapes of arXiv:2505.16329 fitted at small gamma; A, B: the two-constant fit
# A gamma + B gamma^2/rho^2 of the optimal family)
# table columns: gamma family R_out before_release release_jump c eta_at_0 c1 offset_scale
#                at_bound evaluations
data = ARG1
rho = real(ARG3)
zeta = real(ARG4)
k_opt = real(ARG5)
k_const = real(ARG6)
k_sqrt = real(ARG7)
k_a = real(ARG8)
k_b = real(ARG9)
set terminal pngcairo size 1500,620 font "sans,13"
set output ARG2
L(g) = log(1.0 / g)
s_opt(g) = g + g**2 / rho**2
s_const(g) = g * L(g) + g**2 * L(g)**2 / rho**2
s_sqrt(g) = g * L(g)**(2.0/3) + g**2 * L(g)**(4.0/3) / rho**2
set multiplot layout 1,2 title sprintf("Tuned released excess risk (ODE), isotropic spectrum, ζ = %g, ρ = %g: c and the schedule optimised at every γ", zeta, rho) font ",14" margins 0.06, 0.98, 0.11, 0.86 spacing 0.08
set logscale xy
set xrange [7e-7:0.4]
set grid
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "γ = d / n"
set ylabel "released excess risk R_{out}"
set key top left opaque box font ",10" spacing 1.1
set arrow 1 from 0.003, graph 0 to 0.003, graph 1 nohead dt 3 lc rgb "#888888"
set label 1 "requested range →" at 0.0033, graph 0.04 left font ",9" tc rgb "#666666"
set label 2 "← extension" at 0.0027, graph 0.04 right font ",9" tc rgb "#666666"
set title "R_{out} against γ" font ",11"
# the y range is that of the tuned risks, up to the decade above twice the largest: the fitted
# references are drawn over it, not allowed to stretch it (the two-constant fit reaches 100 at
# γ = 0.4 for ρ = 0.1, above every tuned risk)
# (no index: the name rows of blocks 1 and 2 count as invalid records and are skipped)
stats data u "R_out" nooutput name "RO"
set yrange [*:10**ceil(log10(2 * RO_max))]
set samples 400
plot data index 0 u "gamma":"R_out" w lp pt 7 ps 0.9 lw 1.5 lc rgb "#D55E00" t "output perturbation (const)", \
     data index 1 u "gamma":"R_out" w lp pt 5 ps 0.9 lw 1.5 lc rgb "#0072B2" t "constant noise (sqrt)", \
     data index 2 u "gamma":"R_out" w lp pt 9 ps 1.1 lw 1.5 lc rgb "#009E73" t "optimal (decaying)", \
     k_opt * s_opt(x) w l dt 2 lw 1.5 lc rgb "black" t sprintf("%.3g (γ + γ^2/ρ^2), fitted at small γ", k_opt), \
     k_a * x + k_b * x**2 / rho**2 w l dt 4 lw 1.2 lc rgb "#009E73" t sprintf("%.3g γ + %.3g γ^2/ρ^2 (two constants)", k_a, k_b), \
     zeta**2 / 2 * x w l dt 3 lw 1.5 lc rgb "#666666" t "ζ^2γ/2 (non-private minimax)"
set title "R_{out} / (γ + γ^2/ρ^2): the log factors of the rates of arXiv:2505.16329" font ",11"
unset label 1
unset label 2
unset logscale y
set autoscale y
set format y "%g"
set ylabel "R_{out} / (γ + γ^2/ρ^2)"
stats data index 0 u "gamma":(column("R_out") / s_opt(column("gamma"))) nooutput
set yrange [0:1.6 * STATS_max_y]
set key top left opaque box font ",10"
plot data index 0 u "gamma":(column("R_out") / s_opt(column("gamma"))) w lp pt 7 ps 0.9 lw 1.5 lc rgb "#D55E00" t "output perturbation (const)", \
     data index 1 u "gamma":(column("R_out") / s_opt(column("gamma"))) w lp pt 5 ps 0.9 lw 1.5 lc rgb "#0072B2" t "constant noise (sqrt)", \
     data index 2 u "gamma":(column("R_out") / s_opt(column("gamma"))) w lp pt 9 ps 1.1 lw 1.5 lc rgb "#009E73" t "optimal (decaying)", \
     k_const * s_const(x) / s_opt(x) w l dt 2 lw 1.2 lc rgb "#D55E00" t sprintf("%.3g (γL + γ^2L^2/ρ^2), L = log(1/γ)", k_const), \
     k_sqrt * s_sqrt(x) / s_opt(x) w l dt 2 lw 1.2 lc rgb "#0072B2" t sprintf("%.3g (γL^{2/3} + γ^2L^{4/3}/ρ^2)", k_sqrt), \
     k_opt w l dt 2 lw 1.2 lc rgb "#009E73" t sprintf("%.3g (γ + γ^2/ρ^2)", k_opt), \
     zeta**2 / 2 w l dt 3 lw 1.5 lc rgb "#666666" t "ζ^2/2 (non-private minimax)"
unset multiplot
