/* model=nc: NoisyGD on a last layer under neural collapse (docs/math.md §3, docs/nc.md): its keys,
 * commands (nc_commands.c) and model type over setup (nc_setup.c). SPDX-License-Identifier: MIT */
#include <math.h>

#include "models/nc/nc_model_impl.h"

#define NC_RUN "simulate compare"
#define NC_DATA "simulate compare diagnose"
#define NC_TRAIN "simulate compare account"        /* not diagnose */
#define NC_LAW "simulate compare diagnose account" /* the features and their law (G) */

static const dpd_key_desc nc_keys[] = {
    {"K", DPD_KEY_INT, "10", 2, 1e6, 0, NULL, NULL, "classes"},
    {"p", DPD_KEY_INT, "100", 2, 8589934592.0, 0, NULL, NULL, "feature dimension, >= K"},
    {"n", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NULL, "training samples"},
    {"n_test", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NC_RUN, "test points"},
    {"features", DPD_KEY_TEXT, "etf", 0, 0, 0, NULL, NC_LAW,
     "etf (the synthetic law of the keys below) | file:PATH (.npy or text: `label x_1 ... x_p` "
     "per row; docs/nc.md)"},
    {"labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_LAW,
     "file:PATH: the labels of the features file (then it holds the features alone)"},
    {"test_features", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_DATA,
     "file:PATH: test rows of file features (required by simulate and compare with them)"},
    {"test_labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_DATA,
     "file:PATH: the labels of the test_features file"},
    {"x_bound", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_LAW,
     "public bound R on |x| of file features: training rows clipped to norm R, G = c R "
     "(required unless normalize = l2 or center_l2)"},
    {"etf", DPD_KEY_TEXT, "sparse", 0, 0, 0, "sparse|dense", NC_LAW,
     "simplex ETF basis P: the first K basis vectors, or the QR of a seeded Gaussian p x K"},
    {"imbalance_ratio", DPD_KEY_REAL, "1", 1, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "size ratio of the large to the small classes (1: balanced)"},
    {"imbalance_fraction", DPD_KEY_REAL, "0", 0, 1, DPD_KEY_HI_OPEN, NULL, NULL,
     "fraction of the classes that are small (the last ones)"},
    {"shift", DPD_KEY_TEXT, "none", 0, 0, 0, "none|cube|rademacher", NC_LAW,
     "training feature shifts, i.i.d. per sample and coordinate (uniform on [-beta, beta] or "
     "+-beta)"},
    {"beta", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "size |v|_inf of the training shifts"},
    {"offset", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "|nu|_inf of one common training offset nu (0: none)"},
    {"test_shift", DPD_KEY_TEXT, "none", 0, 0, 0, "none|cube|rademacher|adversarial|gaussian",
     NC_RUN, "test-time perturbation of size beta_test (gaussian: u ~ N(0, beta_test^2 I))"},
    {"beta_test", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NC_RUN,
     "size |u|_inf of the test perturbation (gaussian: its standard deviation)"},
    {"resize", DPD_KEY_TEXT, NULL, 0, 0, 0, "none|subset|copies", NC_LAW,
     "feature dimension changed first: a random subset of resize_p coordinates or copies [none]"},
    {"resize_p", DPD_KEY_INT, NULL, 1, 1099511627776.0, 0, NULL, NC_LAW, "the new dimension"},
    {"trainer", DPD_KEY_TEXT, NULL, 0, 0, 0, "noisygd|dpsgd", NC_TRAIN, "trainer [noisygd]"},
    {"sampling", DPD_KEY_TEXT, NULL, 0, 0, 0, "poisson|fixed", NC_TRAIN, "dpsgd [poisson]"},
    {"q", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN, NULL, NC_TRAIN, "dpsgd: rate [0.01]"},
    {"batch", DPD_KEY_INT, NULL, 1, 1073741823.0, 0, NULL, NC_TRAIN, "dpsgd fixed [round(q n)]"},
    {"epochs", DPD_KEY_REAL, NULL, 0, 1e9, DPD_KEY_LO_OPEN, NULL, NC_TRAIN, "dpsgd [10]"},
    {"lr_schedule", DPD_KEY_TEXT, NULL, 0, 0, 0, "const|cosine|step|sqrt", NC_TRAIN, "dpsgd"},
    {"clip", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "dpsgd: per-sample gradient clip [1]"},
    {"noise_multiplier", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "dpsgd: z given (instead of epsilon)"},
    {"offset_at_test", DPD_KEY_TEXT, "no", 0, 0, 0, "no|yes", NC_RUN,
     "whether test points carry the training offset nu too (a bias of the feature extractor)"},
    {"normalize", DPD_KEY_TEXT, "none", 0, 0, 0, "none|center|l2|center_l2", NC_TRAIN,
     "feature normalisation (seed section 4): subtract the training mean from training and test "
     "features (center; G = 2 c X (1 + n/(n-1))), scale training features to norm 1 (l2; "
     "G = c), or both (center_l2; G = c (2 n - 1): the mean moves every unit feature)"},
    {"pca_k", DPD_KEY_INT, "0", 0, 8589934592.0, 0, NULL, NC_TRAIN,
     "PCA fix (seed section 4): train on the projection onto the top pca_k principal directions "
     "of a public sample (0 = off; 1 <= pca_k <= p)"},
    {"n_public", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NC_TRAIN,
     "size of the public unlabelled sample of the PCA fix (same law as training; part of the "
     "problem)"},
    {"pca_center", DPD_KEY_TEXT, "yes", 0, 0, 0, "no|yes", NC_TRAIN,
     "PCA of the public sample's covariance (yes) or of its uncentred second moment (no, where an "
     "offset nu is a top direction)"},
    {"loss", DPD_KEY_TEXT, "ce", 0, 0, 0, "ce|square", NC_TRAIN, "cross-entropy or square loss"},
    {"steps", DPD_KEY_INT, "1", 1, 1e9, 0, NULL, NC_TRAIN, "NoisyGD steps T (1: one-step)"},
    {"eta", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NC_RUN,
     "step size (the one-step classifier does not depend on it)"},
    {"radius", DPD_KEY_REAL, "inf", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_RUN,
     "projection of W onto the Frobenius ball of this radius after each step; inf = none"},
    {"epsilon", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "(epsilon, delta)-DP of the whole run (exact GDP calibration)"},
    {"delta", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "delta of the (epsilon, delta) guarantee [1/n]"},
    {"mu", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "privacy of the whole run as mu-GDP"},
    {"zcdp", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "privacy of the whole run as zCDP (T steps of rho_step: zcdp = T rho_step)"},
    {"sigma", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "noise standard deviation on the summed gradient, given directly"},
    {"seeds", DPD_KEY_INT, "16", 1, 16777216.0, 0, NULL, NC_RUN, "replicates"},
    {"save_replicates", DPD_KEY_INT, "1", 0, 1, 0, NULL, NC_RUN,
     "per-replicate values: 1 = replicates.tsv (each replicate's test error and |W|), 0 = none"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, NULL, "master seed"},
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, NC_RUN,
     "worker threads (0 = all cores); results do not depend on it"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

static const dpd_model_command nc_commands[] = {
    {.name = "simulate",
     .summary = "NoisyGD replicates: test error with standard errors, per class and replicate",
     .files = "classes.tsv [replicates.tsv] summary.json [nc_simulate.png]",
     .example = "dpdyn simulate --model=nc --K=10 --p=1000 --n=1000 --epsilon=1 --delta=1e-4",
     .numbers = dpd__nc_simulate_numbers,
     .run = dpd__nc_simulate,
     .uses = NC_USES_TRAIN | NC_USES_REPLICAS},
    {.name = "compare",
     .summary = "NoisyGD replicates against the exact one-step error and the papers' bounds",
     .files = "classes.tsv [replicates.tsv] summary.json [nc_compare.png]",
     .example = "dpdyn compare --model=nc --K=10 --p=1000 --n=100 --sigma=10",
     .numbers = dpd__nc_compare_numbers,
     .run = dpd__nc_compare,
     .uses = NC_USES_TRAIN | NC_USES_REPLICAS},
    {.name = "diagnose",
     .summary = "collapse diagnostics of the features (file or ETF law): means, cosines, beta, G",
     .files = "classes.tsv cosines.tsv beta_quantiles.tsv summary.json [nc_diagnose.png]",
     .example = "dpdyn diagnose --model=nc --features=file:feats.npy --labels=file:labels.npy",
     .numbers = dpd__nc_diagnose_numbers,
     .run = dpd__nc_diagnose,
     .uses = NC_USES_DIAGNOSE},
    {.name = "account",
     .summary = "the noise of the run and every guarantee it satisfies",
     .files = "summary.json",
     .example = "dpdyn account --model=nc --K=10 --p=1000 --epsilon=1 --delta=1e-4",
     .numbers = dpd__nc_account_numbers,
     .run = dpd__nc_account,
     .uses = NC_USES_TRAIN},
    {.name = NULL}};

static const char *const nc_small[] = {"K",  "3",     "p", "12",   "n", "30", "n_test",
                                       "40", "seeds", "3", "zcdp", "2", NULL};

const dpd_model_type dpd__model_nc = {
    .name = "nc",
    .summary = "NoisyGD on a last layer under neural collapse (docs/math.md section 3)",
    .keys = nc_keys,
    .commands = nc_commands,
    .small = nc_small,
    .setup = dpd__nc_setup,
    .release = dpd__nc_release,
    .workspace_bytes = dpd__nc_workspace_bytes};
