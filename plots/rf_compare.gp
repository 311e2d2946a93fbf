# dpdyn compare --model=rf: simulated DP-GD test risk (mean +- 2 SE) against the
# Ornstein-Uhlenbeck theory (exact discrete steps), with the fraction of clipped samples on
# the right axis: the theory holds while that fraction is zero; below, the residual
# (simulation - theory) / SE with dashed lines at +-3.
# usage: gnuplot -c rf_compare.gp trajectory.tsv clipping.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t step train_risk train_risk_se test_risk test_risk_se
#                         clipped_fraction ou_test_risk ou_bias ou_noise
#                         ou_test_risk_continuous theta_star_test_risk
# clipping.tsv columns:   t step clipped_fraction
# dpdyn-figure: second=clipping.tsv (embedded in dpdyn; the second data file it reads, ARG2)
# data files: `#` metadata lines, one header row of column names, tab-separated rows
set datafile separator "\t"
set datafile columnheaders
data = ARG1
clipping = ARG2
fmt = (ARGC >= 4) ? ARG4 : "png"
# ---- style shared by the dpdyn figures: Okabe-Ito colour-blind-safe palette
blue = "#0072B2"; sky = "#56B4E9"; vermillion = "#D55E00"; green = "#009E73"; orange = "#E69F00"
purple = "#CC79A7"; yellow = "#F0E442"; black = "#000000"; grey = "#666666"
W = 900; H = 720
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
set grid xtics ytics lc rgb "#d9d9d9" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
# ---- the layout: title, main panel, residual panel, caption
set lmargin at screen 0.11
set rmargin at screen 0.89
# a title of two lines (the setting, then the parameters) moves the panel down
two = (ARGC >= 5) ? (strstrt(ARG5, "\n") > 0) : 0
top = two ? 0.885 : 0.925
if (ARGC >= 5) { set label 100 ARG5 at screen 0.5, screen (two ? 0.972 : 0.965) center noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444" }
pos(x) = (x > 0) ? x : NaN
# one replicate has no standard errors (nan, or 0 in older files): the band, the error bars and the residual panel
# are left out and the curves drawn alone (S(c): the SE column named c, or 0 without reading it)
stats data u ((strcol("test_risk_se") eq "nan" || column("test_risk_se") <= 0) ? 0 : 1) nooutput name "HS"
has_se = (HS_sum > 0)
S(c) = has_se ? column(c) : 0
# Linear risk axis over the simulated band and the theory with a margin and headroom for the key;
# theta*'s line is drawn only when it falls inside (it is huge near p = n).
stats data u (column("test_risk") + 2 * S("test_risk_se")) nooutput name "S"
stats data u (column("test_risk") - 2 * S("test_risk_se")) nooutput name "SL"
stats data u "ou_test_risk" nooutput name "O"
# theta_star = off: the column is nan throughout (no stats on it, no warning)
stats data u ((strcol("theta_star_test_risk") eq "nan") ? 0 : 1) nooutput name "TSN"
if (TSN_sum > 0) { stats data u "theta_star_test_risk" nooutput name "TS" }
stats clipping u "clipped_fraction" nooutput name "CF"
yhi = (S_max > O_max) ? S_max : O_max
ylo = (SL_min < O_min) ? SL_min : O_min
ylo = (ylo > 0) ? ylo : 0
ymin = ylo - 0.05 * (yhi - ylo)
ymin = (ymin > 0) ? ymin : 0
ymax = yhi + 0.55 * (yhi - ymin)
star_in = exists("TS_min") && (TS_min <= ymax && TS_min >= ymin)  # theta_star = off: nan
clipped = (CF_max > 0)
# the +-2 SE band is drawn; when it is thinner than about 5 pixels, error bars mark it too
RW_max = 0; RW_records = 0; rmax = 0
if (has_se) {
  stats data u (column("test_risk_se") > 0 ? 4 * column("test_risk_se") : NaN) nooutput name "RW"
  # the residual panel draws the summary's own numbers: the column gap_in_se, |sim. - OU| in the
  # SE of the gap (compare.h: of the paired differences when the theory is per data draw)
  stats data u (column("gap_in_se")) nooutput name "R1"
  rmax = exists("R1_max") ? R1_max : 0  # older outputs lack the column: empty panel
}
bars = has_se && (RW_max / (ymax - ymin) * 0.5 * H < 5)
every_k = int(RW_records / 20) > 1 ? int(RW_records / 20) : 1
rlim = (rmax * 1.15 > 4.5) ? rmax * 1.15 : 4.5
stats data u "step" nooutput name "K"
set multiplot
# ---- main panel
set tmargin at screen top
set bmargin at screen (has_se ? 0.415 : 0.18)
set xrange [0:K_max]
if (has_se) { set format x ""; unset xlabel } else { set format x "%g"; set xlabel "DP-GD step k" }
set ylabel "test risk (mean squared error)"
set yrange [ymin:ymax]
set mytics 2
if (clipped) { set y2label "clipped fraction"; set y2range [0:1.4]; set y2tics 0, 0.2, 1; set ytics nomirror }
set key top right
SIMBARS = bars ? 'data every every_k::1 u "step":"test_risk":(2 * column("test_risk_se")) w yerrorbars pt 7 ps 0.5 lc rgb blue t "DP-GD ± 2 SE (bars)", ' : ''
STAR = star_in ? 'data u "step":(pos(column("theta_star_test_risk"))) w l lc rgb black lw 1.5 dt 3 t "θ* = Φ^+y test risk", ' : ''
CLIP = clipped ? 'clipping u "step":"clipped_fraction" axes x1y2 w l lc rgb green lw 1.5 t "clipped fraction (right axis)", ' : ''
BAND = has_se ? 'data u "step":(column("test_risk") - 2 * column("test_risk_se")):(column("test_risk") + 2 * column("test_risk_se")) w filledcurves lc rgb sky fs transparent solid 0.45 border lc rgb blue t (bars ? "" : "DP-GD test risk ± 2 SE"), ' : ''
plot @BAND \
     data u "step":"test_risk" w l lc rgb blue lw 1.5 t (bars ? "DP-GD test risk" : has_se ? "" : "DP-GD test risk (one replicate)"), @SIMBARS \
     data u "step":(pos(column("ou_test_risk"))) w l lc rgb vermillion lw 2.5 dt 2 t "OU theory (exact discrete)", @STAR @CLIP \
     NaN notitle
# ---- residual panel (in SE: only with standard errors)
if (has_se) {
  unset label 100
  unset label 101
  unset y2label
  unset y2tics
  set ytics mirror
  set tmargin at screen 0.395
  set bmargin at screen 0.18
  set format x "%g"
  set xlabel "DP-GD step k"
  set ylabel "|sim. − OU| / SE\n(dashed: 3)"
  set yrange [0:rlim]
  set mytics default
  if (rlim < 8) { set ytics 3 } else { set ytics auto }
  unset key
  set arrow 1 from 0, 3 to K_max, 3 nohead dt 2 lc rgb grey lw 1.2
  set arrow 3 from 0, 0 to K_max, 0 nohead lc rgb black lw 0.8
  plot data u "step":"gap_in_se" w lp pt 7 ps 0.5 lw 1.2 lc rgb blue t "DP-GD test risk"
}
unset multiplot
