# dpdyn compare --model=semipriv: the theory's error bounds against the number n of labelled
# points (Theorem 1 with the public PCA to k dimensions and without it, k = d; Proposition 4,
# non-private), on log axes, and the measured test error of the run at its n: 1 - mean test
# accuracy ± 2 SE over the replicates. The bounds are upper bounds, not predictions: above an
# error of 1 they say nothing (shaded).
# usage: gnuplot -c semipriv_compare.gp replicates.tsv theory.tsv OUT [png|svg|pdf] [title] [caption]
# replicates.tsv columns (read by name): replicate test_accuracy ...
# theory.tsv columns (read by name): n alpha_private alpha_private_no_pca alpha_nonprivate
# dpdyn-figure: second=theory.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines (`# key = value`: the run's n, k, d), one header row of column
# names, tab-separated rows
reps = ARG1
theory = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mxtics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
# the run's n, k and d from the header lines `# n = 60` of the replicates file
set datafile separator whitespace
set datafile commentschars ""
set datafile nocolumnheaders
hdr(key) = (strcol(1) eq "#" && strcol(2) eq key && strcol(3) eq "=") ? column(4) : NaN
stats reps u (hdr("n")) nooutput name "RN"
stats reps u (hdr("k")) nooutput name "RK"
stats reps u (hdr("d")) nooutput name "RD"
# the header rows' lines: a key's value with a line break (an output directory's name) can put
# a line of text among the `#` lines, which must not be taken for the header row
set datafile separator "\t"
stats reps u ((strcol(1) eq "replicate") ? column(0) : NaN) nooutput name "HR"
stats theory u ((strcol(1) eq "n") ? column(0) : NaN) nooutput name "HT"
set datafile commentschars "#"
set datafile columnheaders
HR = int(HR_max); HT = int(HT_max)
n_run = RN_max
# the measured test error: 1 - mean accuracy, SE = sample sd / sqrt(replicates)
stats reps skip HR u (1 - column("test_accuracy")) nooutput name "TE"
R = TE_records
te_se = (R > 1) ? TE_ssd / sqrt(R) : 0
# the range of the positive bounds (epsilon = inf makes Theorem 1's private bounds 0: not drawn
# on the log axis; Proposition 4's is always positive)
pos(x) = (x > 0) ? x : NaN
mx(a, b) = (a != a) ? b : (b != b) ? a : (a > b) ? a : b
mn(a, b) = (a != a) ? b : (b != b) ? a : (a < b) ? a : b
A(c) = pos(column(c))
stats theory skip HT u "n" nooutput name "NX"
stats theory skip HT u (mx(mx(A("alpha_private"), A("alpha_private_no_pca")), A("alpha_nonprivate"))) nooutput name "AY"
stats theory skip HT u (mn(mn(A("alpha_private"), A("alpha_private_no_pca")), A("alpha_nonprivate"))) nooutput name "BY"
stats theory skip HT u "alpha_private_no_pca" nooutput name "PV"
private_drawn = (PV_max > 0)
lo = TE_mean - 2 * te_se
ymin = (lo > 0 && lo < BY_min) ? lo / 2 : BY_min / 2
ymax = (AY_max > 1 ? AY_max : 1) * 2
set logscale xy
set format x "10^{%T}"
set format y "10^{%T}"
set xrange [NX_min:NX_max]
set yrange [ymin:ymax]
set xlabel "labelled (private) points n"
set ylabel "test error (0-1 loss)"
set key bottom left
set object 1 rect from graph 0, first 1 to graph 1, graph 1 fc rgb "#eeeeee" fs solid 0.6 noborder behind
set label 104 "above 1: the bounds say nothing" at graph 0.98, first 1.5 right font ",10" tc rgb grey front
set arrow 1 from n_run, graph 0 to n_run, graph 1 nohead lc rgb grey dt 3 lw 1
set label 105 sprintf("the run: n = %d", n_run) at n_run, graph 0.96 left offset 0.5, 0 font ",10" tc rgb grey front
POINT = (TE_mean > 0) ? sprintf('"+" u (%.17g):(%.17g):(%.17g):(%.17g) every ::0::0 w yerrorbars pt 7 ps 1.4 lw 1.5 lc rgb black t "measured test error, mean ± 2 SE (%d replicates)", ', n_run, TE_mean, (TE_mean - 2 * te_se > 0 ? TE_mean - 2 * te_se : ymin), TE_mean + 2 * te_se, R) : ''
if (TE_mean <= 0) { set label 106 "measured test error 0 (every test point right): not drawn on the log axis" at graph 0.98, graph 0.80 right font ",10" tc rgb grey front }
if (!private_drawn) { set label 107 "ε = ∞: Theorem 1's private bounds are 0 (no noise), not drawn" at graph 0.98, graph 0.86 right font ",10" tc rgb grey front }
plot theory skip HT u "n":(A("alpha_private")) w l lc rgb blue lw 2 t (private_drawn ? sprintf("Theorem 1 bound, public PCA to k = %d", RK_max) : ""), \
     theory skip HT u "n":(A("alpha_private_no_pca")) w l lc rgb vermillion lw 2 dt 2 t (private_drawn ? sprintf("Theorem 1 bound without PCA (k = d = %d)", RD_max) : ""), \
     theory skip HT u "n":"alpha_nonprivate" w l lc rgb green lw 2 dt 4 t "Proposition 4 bound, non-private", \
     @POINT NaN notitle
