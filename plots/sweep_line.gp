# dpdyn sweep, one varied key: a number of every point's summary.json against the key
# (error bars: mean ± 2 SE when the summary has the number's standard error <name>_se).
# usage: gnuplot -c sweep_line.gp sweep.tsv sweep_line.png [png|svg]
# dpdyn sweep writes the settings of the figure above these lines: title_text, xcol, xname,
# xstring (1: the key's values are text, one tick each), logx, ycol, yname, secol (0: none), logy.
# dpdyn-figure: second=none (embedded in dpdyn; the second data file it reads, ARG2)
data = ARG1
fmt = (ARGC >= 3) ? ARG3 : "png"
if (fmt eq "svg") { set terminal svg size 900,600 dynamic font "sans,12" } else { set terminal pngcairo size 900,600 font "sans,13" }
set output ARG2
set datafile separator "\t"
set datafile columnheaders
set title title_text noenhanced font ",10"
set xlabel xname noenhanced
set ylabel yname noenhanced
if (logx) { set logscale x }
if (logy) { set logscale y }
set grid
set key top left opaque box
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
# nan, inf and (on a log axis) values <= 0 are left out
fin(v) = (v == v && abs(v) < 1e300 && (!logy || v > 0)) ? v : NaN
lo(v, s) = (logy && v - s <= 0) ? v / 100 : v - s
if (xstring) {
  set xtics rotate by -30
  set offsets 0.5, 0.5, graph 0.05, graph 0.05
  if (secol > 0) {
    plot data u 0:(fin(column(ycol))):(lo(column(ycol), 2*column(secol))):(column(ycol) + 2*column(secol)):xticlabels(xcol) \
         w yerrorbars pt 7 ps 0.8 lc rgb "#0072B2" t "mean ± 2 SE"
  } else {
    plot data u 0:(fin(column(ycol))):xticlabels(xcol) w points pt 7 ps 0.8 lc rgb "#0072B2" notitle
  }
} else {
  if (secol > 0) {
    plot data u xcol:(fin(column(ycol))):(lo(column(ycol), 2*column(secol))):(column(ycol) + 2*column(secol)) \
         w yerrorlines pt 7 ps 0.8 lc rgb "#0072B2" t "mean ± 2 SE"
  } else {
    plot data u xcol:(fin(column(ycol))) w linespoints pt 7 ps 0.8 lc rgb "#0072B2" notitle
  }
}
