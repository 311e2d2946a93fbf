# dpdyn sde: the excess risk of the homogenized SDE (H-DP-SGD, Euler-Maruyama; mean +- 2 SE over
# replicates) and its released value; the SDE's expected clipped fraction on the right axis.
# usage: gnuplot -c sde.gp trajectory.tsv release.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns (read by name): t excess_risk excess_risk_se expected_clipped_fraction
# release.tsv columns (read by name): t before before_se after after_se ...
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
# the columns are read by name
algo = "SDE (H-DP-SGD)"
clipname = "expected clipped fraction"
clipcol = "expected_clipped_fraction"
# the expected clipped fraction (right axis) only when it is positive somewhere
stats data every ::1 u clipcol nooutput name "CF"
clipped = (CF_max > 0)
set xlabel "t = k / n"
set ylabel "excess risk"
set logscale y
set xrange [0:1.05]
pos(x) = (x > 0) ? x : NaN
# one replicate has no standard errors (nan, or 0 in older files): the band and the error bars are left out and the
# curve drawn alone (S(c): the SE column named c, or 0 without reading it)
stats data u ((strcol("excess_risk_se") eq "nan" || column("excess_risk_se") <= 0) ? 0 : 1) nooutput name "HS"
has_se = (HS_sum > 0)
S(c) = has_se ? column(c) : 0
# the y range of the band and the released iterate, with a margin; log tics labelled at 1, 2, 5
# when the axis spans less than 2.5 decades
stats data u (pos(column("excess_risk") - 2 * S("excess_risk_se"))) nooutput name "A"
stats data u (column("excess_risk") + 2 * S("excess_risk_se")) nooutput name "B"
stats release u (pos(column("after") - 2 * S("after_se"))) nooutput name "RA"
stats release u (column("after") + 2 * S("after_se")) nooutput name "RB"
ylo = (A_min < RA_min) ? A_min : RA_min
yhi = (B_max > RB_max) ? B_max : RB_max
span = log10(yhi / ylo)
span = (span < 0.05) ? 0.05 : span
ymin = ylo / 10**(0.06 * span)
ymax = yhi * 10**(0.25 * span)
set mytics 10
if (span < 2.5) { set format y "%g"; do for [e = -15:5] { set ytics add (2 * 10.0**e, 5 * 10.0**e) } } else { set format y "10^{%L}" }
if (span < 0.6) { do for [e = -15:5] { set ytics add (3 * 10.0**e, 4 * 10.0**e, 6 * 10.0**e, 7 * 10.0**e, 8 * 10.0**e, 9 * 10.0**e) } }
if (clipped) { set y2label clipname; set y2range [0:1]; set ytics nomirror; set y2tics 0, 0.2, 1 }
CLIP = clipped ? 'data every ::1 u "t":clipcol axes x1y2 w steps lc rgb green lw 1.5 t (clipname . " (right axis)"), ' : ''
# the +-2 SE band is drawn; when it is thinner than about 5 pixels, error bars mark it too
RW_max = 0; RW_records = 0
if (has_se) { stats data u (column("excess_risk") > 0 && column("excess_risk_se") > 0 ? 4 * column("excess_risk_se") / column("excess_risk") : NaN) nooutput name "RW" }
bars = has_se && (RW_max / log(ymax / ymin) * 0.65 * H < 5)
every_k = int(RW_records / 20) > 1 ? int(RW_records / 20) : 1
# headroom for the key (top right, over t >= 0.3, where the released value is drawn too): the top
# of the range is raised until the curves there stay below the key (kf: its share of the panel)
nkeys = 2 + bars + clipped
kf = (nkeys * 20 + 14) / (0.685 * H)
right(v) = (column("t") >= 0.3 && v <= ymax) ? v : ymin
stats data u (right(column("excess_risk") + 2 * S("excess_risk_se"))) nooutput name "KB"
yr = (KB_max > RB_max) ? KB_max : RB_max
ykey = exp((log(yr) - kf * log(ymin)) / (1 - kf)) * 10**(0.02 * span)
ymax = (ykey > ymax) ? ykey : ymax
set yrange [ymin:ymax]
# the right axis: 1 just below the key
if (clipped) { set y2range [0:1 / (1 - kf)] }
SIMBARS = bars ? 'data every every_k::1 u "t":"excess_risk":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w yerrorbars pt 7 ps 0.5 lc rgb blue t sprintf("%s ± 2 SE (bars, at most %.2g%% of the mean)", algo, 50 * RW_max), ' : ''
set key top right
BAND = has_se ? 'data u "t":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w filledcurves lc rgb sky fs transparent solid 0.45 border lc rgb blue t (bars ? "" : algo . " mean ± 2 SE"), ' : ''
plot @BAND \
     data u "t":"excess_risk" w l lc rgb blue lw 1.5 t (bars ? algo . " mean" : has_se ? "" : algo . " (one replicate)"), @SIMBARS @CLIP \
     release u (column("t") + 0.015):"after":(2 * S("after_se")) w yerrorbars pt 7 ps 1 lw 1.5 lc rgb blue t (has_se ? "SDE released value ± 2 SE" : "SDE released value")
