# dpdyn simulate --model=semipriv: Algorithm 1 (public PCA + Noisy-SGD), the test and train
# accuracy of every replicate, and their means with a band of ± 2 standard errors (the summary's
# test_accuracy and test_accuracy_se: sample standard deviation / sqrt(replicates)).
# usage: gnuplot -c semipriv_simulate.gp replicates.tsv replicates.tsv OUT [png|svg|pdf] [title] [caption]
# replicates.tsv columns (read by name): replicate test_accuracy train_accuracy ...
# dpdyn-figure: second=replicates.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
# the header row's line: a key's value with a line break (an output directory's name) can put a
# line of text among the `#` lines, which must not be taken for the header row
set datafile nocolumnheaders
set datafile commentschars ""
stats data u ((strcol(1) eq "replicate") ? column(0) : NaN) nooutput name "HR"
set datafile commentschars "#"
set datafile columnheaders
H = int(HR_max)
# the means and standard errors over the replicates (SE = sample sd / sqrt(replicates))
stats data skip H u "test_accuracy" nooutput name "TE"
stats data skip H u "train_accuracy" nooutput name "TR"
R = TE_records
se(s) = (R > 1) ? s / sqrt(R) : 0
te_se = se(TE_ssd); tr_se = se(TR_ssd)
set xlabel "replicate"
set ylabel "accuracy (fraction of points classified right)"
# the replicates at 0 .. R-1; their means ± 2 SE to the right (test, then train); the key below
# the accuracy 0, clear of the points
g = (R > 10) ? R / 10.0 : 1
set xrange [-0.5:R + 1.2 * g]
step = (R > 12) ? ceil(R / 10.0) : 1
set xtics 0, step, R - 1
set xtics add ("means" R + 0.6 * g)
set yrange [-0.42:1.08]
set ytics 0, 0.1, 1
set key bottom left
set label 103 "chance (0.5)" at graph 0.01, first 0.52 left font ",10" tc rgb grey front
set samples 50
bar(x, m, s, c, t) = sprintf('"+" u (%.17g):(%.17g):(%.17g):(%.17g) every ::0::0 w yerrorbars pt 5 ps 1.3 lw 1.8 lc rgb "%s" t "%s", ', x, m, (R > 1) ? m - 2 * s : m, (R > 1) ? m + 2 * s : m, c, t)
TEB = bar(R + 0.45 * g, TE_mean, te_se, blue, (R > 1) ? sprintf("test accuracy: mean %.3f ± 2 SE (± %.3f)", TE_mean, 2 * te_se) : sprintf("test accuracy %.3f (one replicate: no SE)", TE_mean))
TRB = bar(R + 0.75 * g, TR_mean, tr_se, vermillion, (R > 1) ? sprintf("train accuracy: mean %.3f ± 2 SE (± %.3f)", TR_mean, 2 * tr_se) : sprintf("train accuracy %.3f (one replicate: no SE)", TR_mean))
set arrow 2 from graph 0, first 0 to graph 1, first 0 nohead lc rgb "#bbbbbb" lw 1
set arrow 1 from R - 0.5 + 0.25 * g, graph 0 to R - 0.5 + 0.25 * g, graph 1 nohead lc rgb "#bbbbbb" lw 1
plot 0.5 w l lc rgb grey dt 3 notitle, \
     data skip H u "replicate":"test_accuracy" w p pt 7 ps 1.1 lc rgb blue t "test accuracy of a replicate", \
     data skip H u "replicate":"train_accuracy" w p pt 9 ps 1.1 lc rgb vermillion t "train accuracy of a replicate", \
     @TEB @TRB NaN notitle
