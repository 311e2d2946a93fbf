# dpdyn sweep, two varied keys: a number of every point's summary.json as a heat map, the first
# varied key on the vertical axis, the second on the horizontal one (one cell per value).
# usage: gnuplot -c sweep_heat.gp sweep.tsv sweep_heat.png [png|svg|pdf]
# dpdyn sweep writes the settings of the figure above these lines: title_text, xname, nx,
# xtic_label and xtic_at (arrays: the tick labels and their cells), yname, ny, ytic_label,
# ytic_at, zkey (the column drawn, by name), zname (its label), sekey (its standard error's
# column, "": none), logz (1: log colour scale, plot_log), labels (1: the value in each cell,
# with ± 2 SE when there is one). Every text is a plain string value: nothing read from the
# settings is evaluated as gnuplot code. Sweeps of older versions give the column number zcol.
# dpdyn-figure: second=none (embedded in dpdyn; the second data file it reads, ARG2)
data = ARG1
fmt = (ARGC >= 3) ? ARG3 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 700
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG2
set datafile separator "\t"
set datafile columnheaders
# the columns by name (older settings: by number, without the standard error)
if (!exists("zkey")) { zkey = zcol; sekey = "" }
has_se = (sekey ne "")
set title title_text noenhanced font ",12"
set xlabel xname noenhanced
set ylabel yname noenhanced
set cblabel (has_se && labels ? zname . "   (in the cells: mean ± 2 SE)" : zname) noenhanced
set xtics () rotate by -30
do for [i = 1:|xtic_label|] { set xtics add (xtic_label[i] xtic_at[i]) }
set ytics ()
do for [i = 1:|ytic_label|] { set ytics add (ytic_label[i] ytic_at[i]) }
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
set tics out nomirror
if (logz) { set logscale cb }
set palette defined (0 "#440154", 1 "#3b528b", 2 "#21918c", 3 "#5ec962", 4 "#fde725")
# nan, inf and (on a log scale) values <= 0 are left blank
fin(v) = (v == v && abs(v) < 1e300 && (!logz || v > 0)) ? v : NaN
# a log colour scale spanning less than 2.5 decades is labelled at 1, 2, 5 x 10^k
if (logz) {
  stats data u (fin(column(zkey))) nooutput name "Z"
  if (log10(Z_max / Z_min) < 2.5) { set format cb "%g"; do for [e = -15:15] { set cbtics add (10.0**e, 2 * 10.0**e, 5 * 10.0**e) } }
}
ix(i) = int(i) % nx
iy(i) = int(i) / nx
set style textbox opaque noborder fillcolor rgb "#ffffff" margins 1, 1
# a cell's text: the value, and ± 2 SE under it when the summary has the standard error
lab(z, e) = (has_se && e == e) ? sprintf("%.3g\n± %.2g", z, 2 * e) : sprintf("%.3g", z)
if (labels) {
  plot data u (ix(column(0))):(iy(column(0))):(fin(column(zkey))) w image notitle, \
       data u (ix(column(0))):(iy(column(0))):(lab(column(zkey), has_se ? column(sekey) : NaN)) w labels boxed font ",8" notitle
} else {
  plot data u (ix(column(0))):(iy(column(0))):(fin(column(zkey))) w image notitle
}
