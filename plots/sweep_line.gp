# dpdyn sweep, one varied key: a number of every point's summary.json against the key
# (error bars: mean ± 2 SE when the summary has the number's standard error <name>_se).
# usage: gnuplot -c sweep_line.gp sweep.tsv sweep_line.png [png|svg|pdf]
# dpdyn sweep writes the settings of the figure above these lines: title_text; xkey, ykey,
# sekey: the columns of sweep.tsv drawn, by name (sekey "": no standard error); xname, yname:
# the axis labels; xstring (1: the key's values are text, one tick each); logx, logy (1: a log
# axis, plot_log). Sweeps of older versions give column numbers xcol, ycol, secol (0: none).
# dpdyn-figure: second=none (embedded in dpdyn; the second data file it reads, ARG2)
data = ARG1
fmt = (ARGC >= 3) ? ARG3 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 600
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG2
set datafile separator "\t"
set datafile columnheaders
# the columns by name (older settings: by number)
if (exists("xkey")) { has_se = (sekey ne "") } else { xkey = xcol; ykey = ycol; sekey = secol; has_se = (secol > 0) }
set title title_text noenhanced font ",12"
set xlabel xname noenhanced
set ylabel (has_se ? yname . " (mean ± 2 SE)" : yname) noenhanced
if (logx) { set logscale x }
if (logy) { set logscale y }
set grid xtics ytics mxtics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
# no key (one curve): the y label says what the error bars are, and nothing hides a point
unset key
if (logy) { set mytics 10 }
if (logx) { set mxtics 10 }
# the ranges are those of the values (plus the offsets), not widened to whole decades or tics
if (!xstring) { set autoscale xfix }
set autoscale yfix
# nan, inf and (on a log axis) values <= 0 are left out
fin(v) = (v == v && abs(v) < 1e300 && (!logy || v > 0)) ? v : NaN
# a log axis spanning less than 2.5 decades is labelled at 1, 2, 5 x 10^k
if (logx && !xstring) {
  stats data u (column(xkey) > 0 ? column(xkey) : NaN) nooutput name "X"
  if (log10(X_max / X_min) < 2.5) { set format x "%g"; do for [e = -15:15] { set xtics add (10.0**e, 2 * 10.0**e, 5 * 10.0**e) } }
}
if (logy) {
  stats data u (fin(column(ykey))) nooutput name "Y"
  if (log10(Y_max / Y_min) < 2.5) { set format y "%g"; do for [e = -15:15] { set ytics add (10.0**e, 2 * 10.0**e, 5 * 10.0**e) } }
}
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
lo(v, s) = (logy && v - s <= 0) ? v / 100 : v - s
if (xstring) {
  set xtics rotate by -30
  set offsets 0.5, 0.5, graph 0.05, graph 0.05
  if (has_se) {
    plot data u 0:(fin(column(ykey))):(lo(column(ykey), 2*column(sekey))):(column(ykey) + 2*column(sekey)):xticlabels(strcol(xkey)) \
         w yerrorbars pt 7 ps 0.8 lc rgb blue notitle
  } else {
    plot data u 0:(fin(column(ykey))):xticlabels(strcol(xkey)) w points pt 7 ps 0.8 lc rgb blue notitle
  }
} else {
  if (has_se) {
    plot data u xkey:(fin(column(ykey))):(lo(column(ykey), 2*column(sekey))):(column(ykey) + 2*column(sekey)) \
         w yerrorlines pt 7 ps 0.8 lc rgb blue notitle
  } else {
    plot data u xkey:(fin(column(ykey))) w linespoints pt 7 ps 0.8 lc rgb blue notitle
  }
}
