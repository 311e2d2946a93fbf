# dpdyn simulate: DP-SGD excess risk (mean +- 2 SE over replicates) and the
# released iterate; the clipped fraction on the right axis.
# usage: gnuplot -c simulate.gp trajectory.tsv release.tsv OUT [png|svg] [title]
# trajectory.tsv columns: t excess_risk excess_risk_se clipped_fraction
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
if (fmt eq "svg") { set terminal svg size 900,600 dynamic font "sans,12" } else { set terminal pngcairo size 900,600 font "sans,11" }
set output ARG3
if (ARGC >= 5) { set title ARG5 noenhanced font ",9" }
set xlabel "t = k / n"
set ylabel "excess risk"
set y2label "clipped fraction"
set logscale y
set y2range [0:1]
set ytics nomirror
set y2tics
set grid
set key bottom left opaque box
set xrange [0:1.05]
pos(x) = (x > 0) ? x : NaN
plot data u 1:(pos($2-2*$3)):($2+2*$3) w filledcurves lc rgb "#a6cee3" fs transparent solid 0.6 noborder t "mean ± 2 SE", \
     data u 1:2 w l lc rgb "#1f78b4" lw 1.5 t "DP-SGD mean", \
     data every ::1 u 1:4 axes x1y2 w steps lc rgb "#33a02c" t "clipped fraction", \
     release u ($1+0.015):4:(2*$5) w yerrorbars pt 7 ps 0.8 lc rgb "#1f78b4" t "released iterate ± 2 SE"
