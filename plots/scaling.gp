# Scaling study (scripts/scaling.sh): tuned released excess risk R_out of the three schedule
# families against gamma on power-law spectra, one panel per (rho, alpha), at the main d.
# usage: gnuplot -c scaling.gp scaling.tsv scaling_fit.tsv OUT.png D ZETA "ALPHAS" "RHOS" "FAMILIES"
# (the tables are read by column name: docs/output.md)
data = ARG1
out = ARG3
dmain = real(ARG4)
zeta = real(ARG5)
alphas = ARG6
rhos = ARG7
fams = ARG8
nf = words(fams)
colf(f) = f eq "const" ? "#E69F00" : (f eq "sqrt" ? "#0072B2" : "#009E73")
ptf(f) = f eq "const" ? 7 : (f eq "sqrt" ? 5 : 9)
labf(f) = f eq "const" ? "const (output perturbation)" : (f eq "sqrt" ? "sqrt (constant noise)" : "optimal (c_1/(t + γm))")
na = words(alphas)
nr = words(rhos)
set datafile separator "\t"
set datafile columnheaders
set terminal pngcairo size (na > 1 ? 430 * na + 120 : 1000), (nr > 1 ? 330 * nr + 130 : 520) font "sans,11"
set output out
set multiplot layout nr, na title sprintf("Tuned released excess risk R_{out} of the deterministic equivalent against γ = d/n\npower law λ_i ∝ i^{-α} (mean 1), d = %.0f, θ* flat, ζ = %g\nfinite-size correction where finite\\_size = auto applies it; c and the schedule optimised at every point", dmain, zeta) font ",13" margins (na > 1 ? 0.06 : 0.12), 0.98, (nr > 1 ? 0.07 : 0.12), (nr > 1 ? 0.87 : 0.78) spacing 0.05, 0.07
set logscale xy
set grid
set format x "10^{%L}"
set format y "10^{%L}"
set xrange [2e-5:0.15]
# one legend for all panels, top right beside the title (inside a panel it would hide data)
if (na * nr > 1) { set key at screen 0.995, 0.995 top right vertical box font ",10" samplen 2.5 spacing 1.0 } \
else { set key bottom right opaque box font ",9" spacing 1.0 samplen 2.5 width -2 }
sel(a, r, f) = (abs(column("alpha") - a) < 1e-9 && abs(column("rho") / r - 1) < 1e-9 && \
                abs(column("d") - dmain) < 0.5 && strcol("family") eq f) ? column("R_out") : NaN
do for [ir = 1:nr] {
  do for [ia = 1:na] {
    a = real(word(alphas, ia))
    r = real(word(rhos, ir))
    p = (a > 1 ? 1 - 1 / a : 1)
    undefine STATS_*
    stats data u "gamma":(sel(a, r, "sqrt") == sel(a, r, "sqrt") ? sel(a, r, "sqrt") : \
        (sel(a, r, "const") == sel(a, r, "const") ? sel(a, r, "const") : NaN)) nooutput
    g0 = exists("STATS_min_x") ? STATS_min_x : 1e-3
    r0 = exists("STATS_min_y") ? STATS_min_y : NaN
    set title sprintf("α = %g, ρ = %g", a, r) font ",11"
    set xlabel (ir == nr ? "γ = d / n" : "")
    set ylabel (ia == 1 ? "R_{out}" : "")
    if (ir == nr && ia == na) { set key } else { unset key }
    plot for [i = 1:nf] data u "gamma":(sel(a, r, word(fams, i))) w lp pt ptf(word(fams, i)) ps 0.9 lw 1.5 lc rgb colf(word(fams, i)) t labf(word(fams, i)), \
         0.5 * r0 * (x / g0)**p w l dt 2 lw 1.2 lc rgb "#555555" t "slope 1 − 1/α (α > 1) or 1 (α ≤ 1)"
  }
}
unset multiplot
