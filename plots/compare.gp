# dpdyn compare: DP-SGD simulation (mean +- 2 SE) against the deterministic equivalent (coupled
# risk ODEs), its two-sided bounds and the release jump; below, the residual
# (simulation - ODE) / SE with dashed lines at +-3.
# usage: gnuplot -c compare.gp trajectory.tsv release.tsv OUT [png|svg|pdf] [title] [caption]
# trajectory.tsv columns: t excess_risk excess_risk_se ode_excess_risk
#                         [ode_lower_bound ode_upper_bound] clipped_fraction
#                         [sde_excess_risk sde_excess_risk_se]  (compare --sde=1)
#                         (no bound columns when the ODE method does not give them, e.g. volterra)
# release.tsv columns:    t before before_se after after_se ode_before ode_after
#                         [sde_before sde_before_se sde_after sde_after_se]
# The y range is that of the curves (simulation band, SDE band, ODE, released values) with a
# margin: a bound is drawn where it falls inside it (it constrains there) and leaves the plot
# where it is vacuous; its legend entry says so, and a bound wholly outside has no entry.
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
W = 900; H = 720
if (fmt eq "svg") { set terminal svg size W,H dynamic font "sans,13" } else { if (fmt eq "pdf") { set terminal pdfcairo size W/120.,H/120. font "sans,10" } else { set terminal pngcairo size W,H font "sans,13" } }
set output ARG3
set grid xtics ytics mytics lc rgb "#d9d9d9" lw 1 dt 1, lc rgb "#eeeeee" lw 1 dt 1
set key opaque box lc rgb "#bbbbbb" samplen 2.5 spacing 1.15 font ",11"
set border lw 1.2
# ---- the layout: title, main panel, residual panel, caption
set lmargin at screen 0.11
set rmargin at screen 0.97
# a title of two lines (the setting, then the parameters) moves the panel down
two = (ARGC >= 5) ? (strstrt(ARG5, "\n") > 0) : 0
top = two ? 0.885 : 0.925
if (ARGC >= 5) { set label 100 ARG5 at screen 0.54, screen (two ? 0.972 : 0.965) center noenhanced font ",13" }
if (ARGC >= 6) { set label 101 ARG6 at screen 0.015, screen 0.075 left noenhanced font ",9" tc rgb "#444444" }
# ---- what the files hold
# the columns are read by name; names(f): the header row of f as " name1 name2 ... "
stats data u 1 nooutput
heads = " "; nc = STATS_columns
stats data every ::0::0 u (sum [k = 1:nc] (heads = heads . columnhead(k) . " ", 0)) nooutput
stats release u 1 nooutput
rheads = " "; nc = STATS_columns
stats release every ::0::0 u (sum [k = 1:nc] (rheads = rheads . columnhead(k) . " ", 0)) nooutput
has(h, name) = strstrt(h, " " . name . " ") > 0
has_sde = has(rheads, "sde_after") && has(heads, "sde_excess_risk")
has_bounds = has(heads, "ode_lower_bound") && has(heads, "ode_upper_bound")
pos(x) = (x > 0) ? x : NaN
# one replicate has no standard errors (nan, or 0 in older files): the bands, the error bars and the residual panel
# are left out and the curves drawn alone (S(c): the SE column named c, or 0 without reading it)
stats data u ((strcol("excess_risk_se") eq "nan" || column("excess_risk_se") <= 0) ? 0 : 1) nooutput name "HS"
has_se = (HS_sum > 0)
S(c) = has_se ? column(c) : 0
# the y range: every curve that is drawn in full, with a margin (log scale)
stats data u (pos(column("excess_risk") - 2 * S("excess_risk_se"))) nooutput name "A"
stats data u (column("excess_risk") + 2 * S("excess_risk_se")) nooutput name "B"
stats data u "ode_excess_risk" nooutput name "O"
ylo = (A_min < O_min) ? A_min : O_min
yhi = (B_max > O_max) ? B_max : O_max
stats release u (pos(column("after") - 2 * S("after_se"))) nooutput name "RA"
stats release u (column("after") + 2 * S("after_se")) nooutput name "RB"
stats release u "ode_after" nooutput name "RO"
ylo = (RA_min < ylo) ? RA_min : ylo
ylo = (RO_min < ylo) ? RO_min : ylo
yhi = (RB_max > yhi) ? RB_max : yhi
yhi = (RO_max > yhi) ? RO_max : yhi
if (has_sde) {
  stats data u (pos(column("sde_excess_risk") - 2 * S("sde_excess_risk_se"))) nooutput name "SA"
  stats data u (column("sde_excess_risk") + 2 * S("sde_excess_risk_se")) nooutput name "SB"
  stats release u (pos(column("sde_after") - 2 * S("sde_after_se"))) nooutput name "SRA"
  stats release u (column("sde_after") + 2 * S("sde_after_se")) nooutput name "SRB"
  ylo = (SA_min < ylo) ? SA_min : ylo
  yhi = (SB_max > yhi) ? SB_max : yhi
  ylo = (SRA_min < ylo) ? SRA_min : ylo
  yhi = (SRB_max > yhi) ? SRB_max : yhi
}
span = log10(yhi / ylo)
span = (span < 0.05) ? 0.05 : span
ymin = ylo / 10**(0.06 * span)
ymax = yhi * 10**(0.45 * span)   # provisional; the key's headroom is set below
# a bound is drawn when it lies inside the range over at least 5% of the time after t = 0
# (where it constrains the curves) and differs from the ODE by more than 1% somewhere (on one
# eigenvalue group the bounds are the ODE itself); otherwise a note says why it is not drawn
lb_in = 0; ub_in = 0; lb_out = 0; ub_out = 0; offnote = ""
inside(v) = (column("t") > 0 && v >= ymin && v <= ymax) ? 1 : 0
if (has_bounds) {
  stats data u "ode_lower_bound" nooutput name "LB"
  stats data u "ode_upper_bound" nooutput name "UB"
  stats data u (inside(column("ode_lower_bound"))) nooutput name "LBI"
  stats data u (inside(column("ode_upper_bound"))) nooutput name "UBI"
  stats data u (abs(column("ode_lower_bound") / column("ode_excess_risk") - 1) + abs(column("ode_upper_bound") / column("ode_excess_risk") - 1)) nooutput name "BD"
  lb_in = (LBI_sum >= 0.05 * LBI_records && BD_max > 0.01); lb_out = (LB_min < ymin)
  ub_in = (UBI_sum >= 0.05 * UBI_records && BD_max > 0.01); ub_out = (UB_max > ymax)
  if (BD_max <= 0.01) {
    offnote = "ODE lower and upper bounds: equal to the ODE within 1%, not drawn"
  } else {
    if (!lb_in) { offnote = sprintf("ODE lower bound (down to %.2g)", LB_min) }
    if (!ub_in) { offnote = offnote . (offnote eq "" ? "" : " and ") . sprintf("ODE upper bound (up to %.3g)", UB_max) }
    if (offnote ne "") { offnote = offnote . ": outside the range, not drawn" }
  }
  if (offnote ne "") { ymin = ymin / 10**(0.12 * span) }
}
# the +-2 SE band is drawn; when it is thinner than about 5 pixels, error bars mark it too
panel_px = 0.50 * H
RW_max = 0
if (has_se) { stats data u (column("excess_risk") > 0 && column("excess_risk_se") > 0 ? 4 * column("excess_risk_se") / column("excess_risk") : NaN) nooutput name "RW" }
band_px = RW_max / log(ymax / ymin) * panel_px
bars = has_se && (band_px < 5)
every_k = int(O_records / 20) > 1 ? int(O_records / 20) : 1
# headroom for the key (top right, over t >= 0.3): the top of the range is raised until the
# curves drawn there stay below the key
stats release u (abs(log(column("ode_after") / column("ode_before")))) nooutput name "J"
nkeys = 3 + bars + (J_max > 0) + lb_in + ub_in + has_sde * (2 + bars)
# ymin (not NaN) elsewhere: stats must find valid points even when a curve is above the range
right(v) = (column("t") >= 0.3 && v <= ymax) ? v : ymin
stats data u (right(column("excess_risk") + 2 * S("excess_risk_se"))) nooutput name "KB"
stats data u (right(column("ode_excess_risk"))) nooutput name "KO"
yr = (KB_max > KO_max) ? KB_max : KO_max
yr = (RB_max > yr) ? RB_max : yr
if (ub_in) { stats data u (right(column("ode_upper_bound"))) nooutput name "KU"; yr = (KU_max > yr) ? KU_max : yr }
if (has_sde) { stats data u (right(column("sde_excess_risk") + 2 * S("sde_excess_risk_se"))) nooutput name "KS"; yr = (KS_max > yr) ? KS_max : yr }
kf = (nkeys * 21 + 16) / panel_px
ymax = exp((log(yr) - kf * log(ymin)) / (1 - kf)) * 10**(0.02 * span)
ymax = (ymax > yhi * 10**(0.08 * span)) ? ymax : yhi * 10**(0.08 * span)
span = log10(ymax / ymin)
# the residual panel's range
res(m, s, o) = (s > 0) ? (m - o) / s : NaN
rmax = 0
if (has_se) {
  stats data u (res(column("excess_risk"), column("excess_risk_se"), column("ode_excess_risk"))) nooutput name "R1"
  rmax = (abs(R1_min) > abs(R1_max)) ? abs(R1_min) : abs(R1_max)
}
if (has_se && has_sde) {
  stats data u (res(column("sde_excess_risk"), S("sde_excess_risk_se"), column("ode_excess_risk"))) nooutput name "R2"
  rmax = (abs(R2_min) > rmax) ? abs(R2_min) : rmax
  rmax = (abs(R2_max) > rmax) ? abs(R2_max) : rmax
}
rlim = (rmax * 1.15 > 4.5) ? rmax * 1.15 : 4.5

set multiplot
# ---- main panel
set tmargin at screen top
set bmargin at screen (has_se ? 0.415 : 0.18)
set xrange [0:1.05]
if (has_se) { set format x ""; unset xlabel } else { set format x "%g"; set xlabel "t = k / n" }
set ylabel "excess risk"
set logscale y
set yrange [ymin:ymax]
set mytics 10
if (span < 2.5) { set format y "%g"; do for [e = -15:5] { set ytics add (2 * 10.0**e, 5 * 10.0**e) } } else { set format y "10^{%L}" }
if (span < 0.6) { do for [e = -15:5] { set ytics add (3 * 10.0**e, 4 * 10.0**e, 6 * 10.0**e, 7 * 10.0**e, 8 * 10.0**e, 9 * 10.0**e) } }
set key top right
lb_t = lb_in ? (lb_out ? "ODE lower bound (partly below range)" : "ODE lower bound") : ""
ub_t = ub_in ? (ub_out ? "ODE upper bound (partly above range)" : "ODE upper bound") : ""
BOUNDS = ""
if (lb_in) { BOUNDS = BOUNDS . 'data u "t":"ode_lower_bound" w l lc rgb grey lw 1.5 dt 3 t lb_t, ' }
if (ub_in) { BOUNDS = BOUNDS . 'data u "t":"ode_upper_bound" w l lc rgb grey lw 1.5 dt 4 t ub_t, ' }
SDE = ""
if (has_sde) {
  SDE = !has_se ? '' : 'data u "t":(pos(column("sde_excess_risk") - 2 * S("sde_excess_risk_se"))):(column("sde_excess_risk") + 2 * S("sde_excess_risk_se")) w filledcurves lc rgb green fs transparent solid 0.30 border lc rgb green t (bars ? "" : "SDE mean ± 2 SE"), '
  SDE = SDE . 'data u "t":"sde_excess_risk" w l lc rgb green lw 1.5 dt 4 t (bars || !has_se ? "SDE mean (Euler–Maruyama)" : ""), '
  if (bars) { SDE = SDE . 'data every every_k::1 u (column("t") + 0.004):"sde_excess_risk":(pos(column("sde_excess_risk") - 2 * S("sde_excess_risk_se"))):(column("sde_excess_risk") + 2 * S("sde_excess_risk_se")) w yerrorbars pt 5 ps 0.5 lc rgb green t "SDE ± 2 SE (bars)", ' }
  SDE = SDE . 'release u (column("t") + 0.03):"sde_after":(2 * column("sde_after_se")) w yerrorbars pt 5 ps 1 lw 1.5 lc rgb green t (has_se ? "SDE released ± 2 SE" : "SDE released"), '
}
# the release jump is drawn when it is longer than about 3 pixels
JUMP = (J_max / log(ymax / ymin) * panel_px > 3) ? 'release u "t":"ode_before":(0):(column("ode_after") - column("ode_before")) w vectors head filled lc rgb vermillion lw 2 t "ODE release jump", ' : ''
SIMBARS = bars ? 'data every every_k::1 u "t":"excess_risk":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w yerrorbars pt 7 ps 0.5 lc rgb blue t sprintf("DP-SGD ± 2 SE (bars, at most %.2g%% of the mean)", 50 * RW_max), ' : ''
if (offnote ne "") { set label 102 offnote at graph 0.02, graph 0.04 left noenhanced font ",10" tc rgb grey front }
BAND = has_se ? 'data u "t":(pos(column("excess_risk") - 2 * column("excess_risk_se"))):(column("excess_risk") + 2 * column("excess_risk_se")) w filledcurves lc rgb sky fs transparent solid 0.45 border lc rgb blue t (bars ? "" : "DP-SGD mean ± 2 SE"), ' : ''
plot @BAND \
     data u "t":"excess_risk" w l lc rgb blue lw 1.5 t (bars ? "DP-SGD mean" : has_se ? "" : "DP-SGD (one replicate)"), @SIMBARS \
     release u (column("t") + 0.015):"after":(2 * S("after_se")) w yerrorbars pt 7 ps 1 lw 1.5 lc rgb blue t (has_se ? "DP-SGD released ± 2 SE" : "DP-SGD released"), @SDE \
     data u "t":"ode_excess_risk" w l lc rgb vermillion lw 2.5 dt 2 t "ODE (deterministic equivalent)", \
     @JUMP @BOUNDS \
     NaN notitle
# ---- residual panel (in SE: only with standard errors)
RES2 = has_sde ? 'data u "t":(res(column("sde_excess_risk"), S("sde_excess_risk_se"), column("ode_excess_risk"))) w lp pt 5 ps 0.5 lw 1.2 lc rgb green t "SDE", release u (column("t") + 0.03):(res(column("sde_after"), column("sde_after_se"), column("ode_after"))) w p pt 5 ps 1 lc rgb green notitle, ' : ''
if (has_se) {
  unset label 100
  unset label 101
  unset label 102
  set tmargin at screen 0.395
  set bmargin at screen 0.18
  unset logscale y
  set format y "%g"
  if (rlim < 8) { set ytics 3 } else { set ytics auto }
  set mytics default
  set format x "%g"
  set xlabel "t = k / n"
  set ylabel "(sim. − ODE) / SE\n(dashed: ±3)"
  set yrange [-rlim:rlim]
  unset key
  set arrow 1 from 0, 3 to 1.05, 3 nohead dt 2 lc rgb grey lw 1.2
  set arrow 2 from 0, -3 to 1.05, -3 nohead dt 2 lc rgb grey lw 1.2
  set arrow 3 from 0, 0 to 1.05, 0 nohead lc rgb black lw 0.8
  plot data u "t":(res(column("excess_risk"), column("excess_risk_se"), column("ode_excess_risk"))) w lp pt 7 ps 0.5 lw 1.2 lc rgb blue t "DP-SGD", @RES2 \
       release u (column("t") + 0.015):(res(column("after"), column("after_se"), column("ode_after"))) w p pt 7 ps 1 lc rgb blue notitle
}
unset multiplot
