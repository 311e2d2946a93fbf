# dpdyn interpolate --model=rf: the smallest eigenvalue of the kernel Phi Phi^T / p (and of the
# centred features) against p/n, mean +- 2 SE over replicates, beside the p -> infinity limit
# lambda_min(K) of the Hermite expansion and the slides' high-probability lower bound
# (1/4) sum_r mu_r^2 lambda_min((X X^T/d)^(r)); both axes logarithmic. Eigenvalues at rounding
# level (p < n: the Gram is singular) are left out.
# usage: gnuplot -c rf_interpolate.gp interpolate.tsv interpolate.tsv OUT [png|svg|pdf] [title] [caption]
# interpolate.tsv columns: p_over_n p lambda_min lambda_min_se lambda_max lambda_max_se
#   lambda_min_centred lambda_min_centred_se ... bound kernel_lambda_min kernel_lambda_max hermite_sum
# dpdyn-figure: second=interpolate.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 1000; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" } else { set title "random features: smallest eigenvalue of the kernel against p/n" font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key bottom right opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.1 font ",10"
set border lw 1.2
set logscale xy
set autoscale xfix
set offsets graph 0.06, graph 0.06, 0, 0
set format y "10^{%L}"
set xlabel "p / n (features per training sample)"
set ylabel "eigenvalue of Φ Φ^T / p"
stats data u "lambda_max" nooutput name "LM"
# an eigenvalue below 1e-9 lambda_max is rounding (a singular Gram): not drawn
ok(v) = (v > 1e-9 * LM_max) ? v : NaN
lo(v, s) = (v - 2 * s > 1e-9 * LM_max) ? v - 2 * s : 1e-9 * LM_max
stats data u "kernel_lambda_min" nooutput name "K"
stats data u "bound" nooutput name "B"
plot data u "p_over_n":(ok(column("lambda_min"))):(lo(column("lambda_min"), column("lambda_min_se"))):(column("lambda_min") + 2 * column("lambda_min_se")) w yerrorlines pt 7 ps 1.2 lw 2 lc rgb blue t "λ_{min}(ΦΦ^T/p), mean ± 2 SE", \
     data u "p_over_n":(ok(column("lambda_min_centred"))) w lp pt 6 ps 1.2 lw 1.5 dt 2 lc rgb sky t "λ_{min} of the centred features", \
     data u "p_over_n":"kernel_lambda_min" w l lw 2 lc rgb green t sprintf("p → ∞ limit λ_{min}(K) = %.3g", K_max), \
     data u "p_over_n":"bound" w l lw 2 dt 4 lc rgb vermillion t sprintf("slides' bound ¼ Σ_r μ_r^2 λ_{min}((XX^T/d)^{∘r}) = %.3g", B_max)
