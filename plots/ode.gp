# dpdyn ode: the deterministic equivalent R(t), its two-sided bounds and the
# last-iterate release jump.
# usage: gnuplot -c ode.gp trajectory.tsv release.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t excess_risk [lower_bound upper_bound]
# (the bound columns are absent when the method does not give the bounds, e.g. volterra)
# dpdyn-figure: second=release.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
release = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 680
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
# title above, the full parameter line as a caption below
if (ARGC >= 5) { set title ARG5 noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444"; set bmargin at screen 0.19 }
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
set xlabel "t = k / n"
set ylabel "excess risk"
set logscale y
set xrange [0:1.05]
# the y range of R(t) and the released value, with a margin; a bound is drawn when it lies inside
# the range over at least 5% of the time after t = 0 (where it constrains), otherwise a note
# gives its extent
stats data u "excess_risk" nooutput name "R"
stats release u "ode_after" nooutput name "RO"
ylo = (R_min < RO_min) ? R_min : RO_min
yhi = (R_max > RO_max) ? R_max : RO_max
span = log10(yhi / ylo)
span = (span < 0.05) ? 0.05 : span
ymin = ylo / 10**(0.06 * span)
ymax = yhi * 10**(0.3 * span)
# the columns are read by name; the bounds are drawn when the file has them
stats data u 1 nooutput
heads = " "; nc = STATS_columns
stats data every ::0::0 u (sum [k = 1:nc] (heads = heads . columnhead(k) . " ", 0)) nooutput
has(name) = strstrt(heads, " " . name . " ") > 0
has_bounds = has("lower_bound") && has("upper_bound")
lb_in = 0; ub_in = 0; offnote = ""
inside(v) = (column("t") > 0 && v >= ymin && v <= ymax) ? 1 : 0
if (has_bounds) {
  stats data u "lower_bound" nooutput name "LB"
  stats data u "upper_bound" nooutput name "UB"
  stats data u (inside(column("lower_bound"))) nooutput name "LBI"
  stats data u (inside(column("upper_bound"))) nooutput name "UBI"
  stats data u (abs(column("lower_bound") / column("excess_risk") - 1) + abs(column("upper_bound") / column("excess_risk") - 1)) nooutput name "BD"
  lb_in = (LBI_sum >= 0.05 * LBI_records && BD_max > 0.01)
  ub_in = (UBI_sum >= 0.05 * UBI_records && BD_max > 0.01)
  if (BD_max <= 0.01) {
    offnote = "lower and upper bounds: equal to R(t) within 1%, not drawn"
  } else {
    if (!lb_in) { offnote = sprintf("lower bound (down to %.2g)", LB_min) }
    if (!ub_in) { offnote = offnote . (offnote eq "" ? "" : " and ") . sprintf("upper bound (up to %.3g)", UB_max) }
    if (offnote ne "") { offnote = offnote . ": outside the range, not drawn" }
  }
  if (offnote ne "") { ymin = ymin / 10**(0.12 * span) }
}
set yrange [ymin:ymax]
span = log10(ymax / ymin)
set mytics 10
if (span < 2.5) { set format y "%g"; do for [e = -15:5] { set ytics add (2 * 10.0**e, 5 * 10.0**e) } } else { set format y "10^{%L}" }
if (span < 0.6) { do for [e = -15:5] { set ytics add (3 * 10.0**e, 4 * 10.0**e, 6 * 10.0**e, 7 * 10.0**e, 8 * 10.0**e, 9 * 10.0**e) } }
if (offnote ne "") { set label 102 offnote at graph 0.02, graph 0.04 left noenhanced font ",10" tc rgb grey front }
BOUNDS = ""
if (lb_in) { BOUNDS = BOUNDS . 'data u "t":"lower_bound" w l lc rgb grey lw 1.5 dt 3 t (LB_min < ymin ? "lower bound (partly below range)" : "lower bound"), ' }
if (ub_in) { BOUNDS = BOUNDS . 'data u "t":"upper_bound" w l lc rgb grey lw 1.5 dt 4 t (UB_max > ymax ? "upper bound (partly above range)" : "upper bound"), ' }
# the release jump is drawn when it is longer than about 3 pixels
set autoscale y
stats release u (abs(log(column("ode_after") / column("ode_before")))) nooutput name "J"
set yrange [ymin:ymax]
JUMP = (J_max / log(ymax / ymin) * 0.7 * H > 3) ? 'release u "t":"ode_before":(0):(column("ode_after") - column("ode_before")) w vectors head filled lc rgb vermillion lw 2 t "release jump"' : 'NaN notitle'
set key top right
plot data u "t":"excess_risk" w l lc rgb vermillion lw 2.5 t "R(t), deterministic equivalent", @BOUNDS @JUMP
