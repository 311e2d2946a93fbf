# Rates study (scripts/rates.sh): the released excess risk R_out against the clipping scale c at
# fixed gamma, with the schedule re-tuned at every c (solid) or fixed at the joint optimum
# (dashed), and a c^2 reference.
# usage: gnuplot -c rates_c.gp rates_c.tsv OUT.png GAMMA RHO ZETA K_C2
# table columns: c family R_out_retuned R_out_fixed eta_at_0_retuned
data = ARG1
gamma = real(ARG3)
rho = real(ARG4)
zeta = real(ARG5)
k_c2 = real(ARG6)
set terminal pngcairo size 1000,680 font "sans,13"
set output ARG2
set title sprintf("Released excess risk against the clipping scale: γ = %g, ρ = %g, ζ = %g, isotropic spectrum", gamma, rho, zeta) font ",12"
set logscale xy
set grid
set format y "10^{%L}"
set xlabel "clipping scale c   (C = c √d)"
set ylabel "released excess risk R_{out} (ODE)"
set key top left opaque box font ",10" spacing 1.1
set xrange [0.01:100]
set arrow 1 from zeta, graph 0 to zeta, graph 1 nohead dt 3 lc rgb "#888888"
set label 1 "c = ζ" at zeta * 1.08, graph 0.04 left font ",10" tc rgb "#666666"
set samples 200
plot data index 0 u "c":"R_out_retuned" w lp pt 7 ps 0.8 lw 1.8 lc rgb "#D55E00" t "output perturbation, η̃0 re-tuned at each c", \
     data index 0 u "c":"R_out_fixed" w l dt 2 lw 1.5 lc rgb "#D55E00" t "output perturbation, η̃0 fixed at the joint optimum", \
     data index 1 u "c":"R_out_retuned" w lp pt 5 ps 0.8 lw 1.8 lc rgb "#0072B2" t "constant noise, η̃0 re-tuned", \
     data index 1 u "c":"R_out_fixed" w l dt 2 lw 1.5 lc rgb "#0072B2" t "constant noise, η̃0 fixed", \
     data index 2 u "c":"R_out_retuned" w lp pt 9 ps 1.0 lw 1.8 lc rgb "#009E73" t "optimal, c1, c2, c3 re-tuned", \
     data index 2 u "c":"R_out_fixed" w l dt 2 lw 1.5 lc rgb "#009E73" t "optimal, c1, c2, c3 fixed", \
     (x > 1 ? k_c2 * x**2 : NaN) w l dt 4 lw 2 lc rgb "black" t "∝ c^2 (reference)"
