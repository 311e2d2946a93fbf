# dpdyn account --model=privacy: the privacy curve delta(eps) of a subsampled Gaussian run: the
# PLD upper bound (the reported one) and lower bound, RDP's (tight conversion) upper bound and the
# CLT approximation (where defined), against eps, log delta; the reported (epsilon, delta) marked.
# usage: gnuplot -c account.gp curve.tsv curve.tsv OUT [png|svg|pdf] [title] [caption]
# curve.tsv columns (read by name): eps delta_up delta_low delta_rdp delta_clt reported (1 on the
# row of the reported epsilon); its line
# "# title: SETTING | RUN: STATEMENT" is read as data (a string, never as a command) for the title
# dpdyn-figure: second=curve.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
data = ARG1
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
# the title line and the header row's line, read as data (strings compared, never evaluated)
TT = ""
set datafile nocolumnheaders
set datafile commentschars ""
stats data u ((strcol(1)[1:9] eq "# title: ") ? (TT = strcol(1)[10:], 0) : NaN) nooutput
stats data u ((strcol(1) eq "eps") ? column(0) : NaN) nooutput name "HR"
set datafile commentschars "#"
set datafile columnheaders
HSKIP = int(HR_max)
# RDP and the CLT are not computed for every mechanism (columns of nan): the key says so
RD_sum = 0; CL_sum = 0
stats data skip HSKIP u ((strcol("delta_rdp") eq "nan") ? 0 : 1) nooutput name "RD"
stats data skip HSKIP u ((strcol("delta_clt") eq "nan") ? 0 : 1) nooutput name "CL"
t_rdp = (RD_sum > 0) ? "RDP (tight conversion), upper bound" : "RDP: not computed for this mechanism"
t_clt = (CL_sum > 0) ? "CLT μ-GDP (approximation)" : "CLT: defined for Poisson, add/remove only"
cut = strstrt(TT, " | ")
if (cut > 0) { TT = TT[1:cut - 1] . "\n" . TT[cut + 3:] }
if (strlen(TT) > 0) { set title TT noenhanced font ",13" } else { if (ARGC >= 5) { set title ARG5 noenhanced font ",13" } }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11" top right
set border lw 1.2
set logscale y
set format y "10^{%L}"
set xlabel "ε"
set ylabel "δ(ε): the smallest δ of an (ε, δ) guarantee"
# the y range: from the smallest positive delta drawn (at most 1e-30 below) to 1
stats data skip HSKIP u "delta_up" nooutput name "UP"
ymin = (UP_min > 1e-30) ? UP_min : 1e-30
set yrange [ymin / 3.0:1]
pos(x) = (x > 0) ? x : NaN
plot data skip HSKIP u "eps":(pos(column("delta_up"))) w l lw 2.6 lc rgb blue t "PLD upper bound (reported)", \
     data skip HSKIP u "eps":(pos(column("delta_low"))) w l lw 1.8 dt 2 lc rgb sky t "PLD lower bound", \
     data skip HSKIP u "eps":(pos(column("delta_rdp"))) w l lw 1.8 lc rgb vermillion t t_rdp, \
     data skip HSKIP u "eps":(pos(column("delta_clt"))) w l lw 1.5 dt 4 lc rgb green t t_clt, \
     data skip HSKIP u "eps":((column("reported") > 0) ? pos(column("delta_up")) : NaN) w p pt 7 ps 1.6 lc rgb black t "the reported (ε, δ)"
