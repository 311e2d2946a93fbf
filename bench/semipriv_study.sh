#!/bin/sh
# Every measurement and figure of docs/semipriv.md "Does PCA help? (measured)" and "Real data"
# (bench/semipriv_study.c, scripts/semipriv_digits.py, plots/semipriv_*.gp). About 30 minutes on
# 2 idle cores. Usage: bench/semipriv_study.sh [BUILD_DIR] [OUT_DIR]   (defaults build, docs/figures)
set -e
B=${1:-build}/dpd_semipriv_study
O=${2:-docs/figures}
mkdir -p "$O"
K200=1,2,3,5,8,10,20,50,100,200
K1000=1,2,5,10,20,50,100,200,500,1000
# one header line per table: concatenated runs keep the first
merge() { awk '/^d n /{if (h++) next} {print}'; }
# figure 1: accuracy against k (default generator; heavy tail nu = 0.2; d = 1000)
$B d=200 nu=0.02 eps=0.1,0.7,inf k=$K200 R=100 > $O/semipriv_k_d200.tsv
$B d=200 nu=0.2 eps=0.1,0.7,inf k=$K200 R=100 > $O/semipriv_k_d200_nu2.tsv
$B d=1000 nu=0.05 eps=0.1,0.7,inf k=$K1000 R=40 > $O/semipriv_k_d1000_nu05.tsv
$B d=1000 nu=0.02 eps=0.1,0.7,inf k=1,2,5,20,100,1000 R=30 > $O/semipriv_k_d1000.tsv
# variants (suffix average, step size of dimension d)
$B d=200 nu=0.02 eps=0.1,0.7,1 k=5,20,200 R=60 variants=1 > $O/semipriv_variants_d200.tsv
$B d=200 nu=0.2 eps=0.1,0.7 k=5,200 R=60 variants=1 > $O/semipriv_variants_d200_nu2.tsv
$B d=1000 nu=0.05 eps=0.1,0.7 k=5,1000 R=30 variants=1 > $O/semipriv_variants_d1000_nu05.tsv
# figure 2: against n
for nu in 0.02 0.2; do
  for n in 100 200 500 1000 2000; do
    R=60; [ $n -ge 2000 ] && R=30
    $B d=200 nu=$nu eps=0.1,0.7 k=5,200 n=$n R=$R
  done | merge > $O/semipriv_n_d200_nu$nu.tsv
done
# figure 3: against n_public
for np in 10 20 50 100 200 500 1000 5000; do
  $B d=200 nu=0.02 eps=0.7,inf k=5 n_public=$np R=60
done | merge > $O/semipriv_npublic_d200.tsv
for np in 6 10 20 50 100 200 500 1000 5000; do
  $B d=200 nu=0.2 eps=0.7,inf k=5 n_public=$np R=60
done | merge > $O/semipriv_npublic_d200_nu2.tsv
# figure 4: digits 3 vs 8
T=$(mktemp -d)
/usr/bin/python3 scripts/semipriv_digits.py "$T/digits38"
$B dir="$T/digits38" zeta=0.1 eps=0.1,0.7,3,10,inf k=1,2,3,5,8,10,15,20,30,40,64 R=200 \
  > $O/semipriv_digits.tsv
rm -r "$T"
P=plots
gnuplot -c $P/semipriv_k.gp $O/semipriv_k_d200.tsv $O/semipriv_k_d200.png \
  "default generator (docs/semipriv.md): d = 200, ν = 0.02, n = 500, n_{public} = 5000, 100 replicates"
gnuplot -c $P/semipriv_k.gp $O/semipriv_k_d200_nu2.tsv $O/semipriv_k_d200_nu2.png \
  "heavy tail ν = 0.2 (70% of the energy outside the top 5): d = 200, n = 500, 100 replicates"
gnuplot -c $P/semipriv_k.gp $O/semipriv_k_d1000_nu05.tsv $O/semipriv_k_d1000_nu05.png \
  "end-to-end setting (docs/semipriv.md): d = 1000, ν = 0.05, n = 500, n_{public} = 5000, 40 replicates"
gnuplot -c $P/semipriv_k.gp $O/semipriv_k_d1000.tsv $O/semipriv_k_d1000.png \
  "default generator (docs/semipriv.md): d = 1000, ν = 0.02, n = 500, n_{public} = 5000, 30 replicates"
gnuplot -c $P/semipriv_n.gp $O/semipriv_n_d200_nu0.02.tsv $O/semipriv_n_d200.png \
  "default generator (docs/semipriv.md): d = 200, ν = 0.02, n_{public} = 5000, 60 replicates (30 at n = 2000)" 200
gnuplot -c $P/semipriv_n.gp $O/semipriv_n_d200_nu0.2.tsv $O/semipriv_n_d200_nu2.png \
  "heavy tail ν = 0.2: d = 200, n_{public} = 5000, 60 replicates (30 at n = 2000)" 200
gnuplot -c $P/semipriv_npublic.gp $O/semipriv_npublic_d200.tsv $O/semipriv_npublic_d200.png \
  "default generator (docs/semipriv.md): d = 200, ν = 0.02, k = 5, n = 500, 60 replicates"
gnuplot -c $P/semipriv_npublic.gp $O/semipriv_npublic_d200_nu2.tsv $O/semipriv_npublic_d200_nu2.png \
  "heavy tail ν = 0.2: d = 200, k = 5, n = 500, 60 replicates (n_{public} >= k + 1 = 6)"
gnuplot -c $P/semipriv_digits.gp $O/semipriv_digits.tsv $O/semipriv_digits.png \
  "sklearn digits 3 vs 8 (d = 64): 178 private, 71 public, 108 test; ζ = 0.1, 200 replicates"
