# Random features: the data-reconstruction attack (dpdyn reconstruct --model=rf,
# docs/overparameterization.md, "Reconstruction"). Two panels from two `dpdyn sweep reconstruct`
# outputs:
#   left:  fraction of training inputs recovered (|cosine| >= 0.9) against p / (n d), theta*
#          released (no privacy), one line per activation;
#   right: the same at fixed p against the privacy epsilon of DP-GD's released last iterate,
#          with the non-private GD iterate (same training, no noise) as a dashed level.
# usage: gnuplot -c rf_reconstruct.gp P_SWEEP.tsv EPS_SWEEP.tsv OUT.png NONPRIVATE NONPRIVATE_SE CAPTION [ACTIVATIONS]
# P_SWEEP.tsv:   sweep.tsv of a sweep over p (and activation, text values with |): columns
#                activation, p_over_nd, reconstructed_fraction, reconstructed_fraction_se
# EPS_SWEEP.tsv: sweep.tsv of a sweep over epsilon (theta = dpgd): columns epsilon,
#                reconstructed_fraction, reconstructed_fraction_se
# NONPRIVATE, NONPRIVATE_SE: the fraction of the non-private GD iterate and its SE (numbers)
# CAPTION: the settings, one line under the panels
# ACTIVATIONS: the activations of P_SWEEP.tsv to draw, space-separated (default: tanh hermite134
#              relu abs_centered)
psweep = ARG1
esweep = ARG2
np = ARG4 + 0
npse = ARG5 + 0
set datafile separator "\t"
set datafile columnheaders
# a row of another activation is NaN: missing, so that each activation's line joins its points
set datafile missing NaN
set terminal pngcairo size 1300,560 font "sans,12"
set output ARG3
set multiplot layout 1,2 title "Reconstructing the training inputs from a random-features model's parameters" font ",14"
set bmargin 6
set grid
set yrange [-0.03:1.05]
set ylabel "fraction of training inputs recovered (|cos| ≥ 0.9)"
set key bottom right opaque box lc rgb "#bbbbbb" font ",10" title "activation (all but hermite134 fail B2)" font ",10"

set title "No privacy: θ* = Φ^+y released" font ",12"
set xlabel "overparameterization p / (n d)"
set logscale x 2
set format x "%g"
acts = ARGC >= 7 ? ARG7 : "tanh hermite134 relu abs_centered"
known = "tanh hermite134 relu abs_centered relu_centered hermite13"
names = "'tanh (odd)' 'hermite134 (B2 holds)' 'ReLU (φ_0, φ_2 ≠ 0)' '|z| centred (even, φ_1 = 0)' 'ReLU centred (φ_2 ≠ 0)' 'hermite13 (odd)'"
colors = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9"
index(a) = sum [k=1:words(known)] (word(known, k) eq a ? k : 0)
name(a) = index(a) > 0 ? word(names, index(a)) : a
color(a) = index(a) > 0 ? word(colors, index(a)) : "#666666"
sel(a) = (strcol("activation") eq a) ? column("reconstructed_fraction") : NaN
set arrow 1 from 1, graph 0 to 1, graph 1 nohead dt 3 lc rgb "#888888"
set label 1 "p = n d" at 1, graph 0.6 right offset -0.5, 0 tc rgb "#666666"
plot for [k=1:words(acts)] psweep u "p_over_nd":(sel(word(acts, k))):(2*column("reconstructed_fraction_se")) \
     w yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb color(word(acts, k)) t name(word(acts, k))
unset arrow 1
unset label 1

set title "DP-GD's last iterate released, fixed p" font ",12"
set key at graph 0.03, graph 0.85 left top Left reverse opaque box lc rgb "#bbbbbb" font ",10" title ""
set xlabel "privacy ε of DP-GD (δ = 1/n); smaller ε = more private"
set logscale x 10
set format x "10^{%L}"
set label 2 ARG6 at screen 0.02, screen 0.03 left font ",10" tc rgb "#444444"
set label 3 "Mean ± 2 SE over independent replicates (each its own data, features, DP-GD noise and attack starts)." at screen 0.02, screen 0.065 left font ",10" tc rgb "#444444"
plot esweep u "epsilon":"reconstructed_fraction":(2*column("reconstructed_fraction_se")) \
       w yerrorlines pt 7 ps 0.9 lw 1.5 lc rgb "#D55E00" t "DP-GD at ε (private)", \
     np w l dt 2 lw 1.5 lc rgb "#000000" t sprintf("GD, same η and T, no noise: %.2f ± %.2f", np, 2*npse)
unset multiplot
