# Reference values for the sequential inference of issue 51 (test/numbers/sequential-inference.test.ts), computed
# independently of simarena's code with R's rpact, mvtnorm and sandwich (Debian r-cran-rpact, r-cran-mvtnorm,
# r-cran-sandwich).
# Run: Rscript scripts/sequential-inference-reference.R > test/fixtures/sequential-inference-reference.json
#
# - studentT: two-sided tail P(|T| >= t) of Student's t (R's pt).
# - bindingPValue: rpact's binding Pocock design (5 looks, alpha 0.05, beta 0.2, bsP) and stage-wise p-values at
#   several (look, z), by mvtnorm's Miwa algorithm over the looks' joint normal law, once through the binding
#   continuation regions f_k <= |Z_k| < c_k and once through |Z_k| < c_k alone (what ignoring futility gives).
# - coverage: the chance under the null that some |Z_k| reaches the bound used for the repeated confidence intervals
#   (their miss rate), with rpact's binding bounds and with its bounds without futility.
# - endsEarly: rpact's user-defined spending for a design whose fourth look spends all of alpha (the bounds met there).
# - observedInformation: rpact's user-defined spending at information rates short of the plan (ties) with the last
#   look spending what is left.
# - clustered: a small data set of weighted pair judgments and the variance components of sandwich's vcovCL (HC0,
#   no cluster adjustment) clustered by rater, by pair and by judgment.
suppressMessages({ library(rpact); library(mvtnorm); library(sandwich) })

num <- function(v) if (is.finite(v)) sprintf("%.17g", v) else "null"
arr <- function(v) paste0("[", paste(vapply(v, num, ""), collapse = ", "), "]")

spent <- function(family, alpha, t) {
  if (t >= 1) return(alpha)
  if (family == "pocock") return(alpha * log(1 + (exp(1) - 1) * t))
  4 * (1 - pnorm(qnorm(1 - alpha / 4) / sqrt(t)))
}

# P(Z_1..Z_{k-1} continue, |Z_k| >= b) under the null, information rates t; `futility` NULL: continuation |Z| < c.
crossing <- function(t, crit, futility, k, b) {
  R <- outer(t[1:k], t[1:k], function(a, c) sqrt(pmin(a, c) / pmax(a, c)))
  if (k == 1) return(2 * pnorm(-b))
  boxes <- if (is.null(futility)) list(rep(0, k - 1)) else {
    g <- as.matrix(expand.grid(rep(list(c(-1, 1)), k - 1)))
    lapply(seq_len(nrow(g)), function(i) g[i, ])
  }
  total <- 0
  for (signs in boxes) {
    lower <- numeric(k); upper <- numeric(k)
    for (j in seq_len(k - 1)) {
      c <- min(crit[j], 40)
      if (is.null(futility)) { lower[j] <- -c; upper[j] <- c }
      else if (signs[j] > 0) { lower[j] <- futility[j]; upper[j] <- c }
      else { lower[j] <- -c; upper[j] <- -futility[j] }
    }
    for (tail in c(-1, 1)) {
      lower[k] <- if (tail > 0) b else -Inf
      upper[k] <- if (tail > 0) Inf else -b
      total <- total + pmvnorm(lower = lower, upper = upper, corr = R, algorithm = Miwa(steps = 4097))[1]
    }
  }
  total
}

tT <- c(0, 0.5, 1.3, 2.0, 2.6, 3.3, 4.5, 7.0)
dfs <- c(1, 2, 3, 9, 10, 14, 29, 119)
tRows <- character()
for (df in dfs) for (t in tT) tRows <- c(tRows, sprintf('{"t": %s, "df": %d, "p": %s}', num(t), df, num(2 * pt(-t, df))))

bind <- getDesignGroupSequential(kMax = 5, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asP", typeBetaSpending = "bsP",
                                 bindingFutility = TRUE, tolerance = 1e-10)
rates <- bind$informationRates
crit <- bind$criticalValues
fut <- c(bind$futilityBounds, 0)
fut[is.na(fut)] <- 0
cases <- list(list(look = 4, z = crit[4]), list(look = 2, z = crit[2] + 0.5), list(look = 3, z = crit[3] + 0.2), list(look = 5, z = crit[5] + 0.1))
caseRows <- character()
for (cs in cases) {
  k <- cs$look
  p1 <- sum(vapply(seq_len(k), function(j) crossing(rates, crit, fut[1:(j - 1)], j, if (j == k) cs$z else crit[j]), 0))
  p0 <- sum(vapply(seq_len(k), function(j) crossing(rates, crit, NULL, j, if (j == k) cs$z else crit[j]), 0))
  caseRows <- c(caseRows, sprintf('{"look": %d, "z": %s, "withRegions": %s, "withoutRegions": %s}', k - 1, num(cs$z), num(p1), num(p0)))
}

miss <- function(t, crit) sum(vapply(seq_along(t), function(j) crossing(t, crit, NULL, j, crit[j]), 0))
coverageRows <- character()
for (family in c("pocock", "obrien-fleming")) {
  type <- if (family == "pocock") c("asP", "bsP") else c("asOF", "bsOF")
  b <- getDesignGroupSequential(kMax = 5, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = type[1], typeBetaSpending = type[2],
                                bindingFutility = TRUE, tolerance = 1e-10)
  plain <- getDesignGroupSequential(kMax = 5, alpha = 0.05, sided = 2, typeOfDesign = type[1], tolerance = 1e-10)
  coverageRows <- c(coverageRows, sprintf('{"family": "%s", "binding": %s, "plain": %s, "missBinding": %s, "missPlain": %s}',
    family, arr(b$criticalValues), arr(plain$criticalValues), num(miss(b$informationRates, b$criticalValues)), num(miss(plain$informationRates, plain$criticalValues))))
}

# The issue's designs: binding futility at the drift of a win rate of 0.65 over 200 pairs, (2 0.65 - 1) sqrt(200),
# where the futility bound reaches the efficacy bound at look 4. Looks 1-3's bounds are simarena's (the test checks
# that its code gives them); from them R solves what the code did before issue 51 (look 4 spending only alpha(0.8),
# look 5 keeping the bound without futility) and the chances that a report built on those bounds gets wrong.
issue <- list(
  list(family = "pocock", critical = c(2.437976688050012, 2.4190414055969844, 2.349679166763476), futility = c(0.41709328003229207, 1.1959867458813762, 1.9565740983014355)),
  list(family = "obrien-fleming", critical = c(4.87688494879076, 3.35701192145848, 2.6780365617926947), futility = c(0, 0.9272750872492919, 1.913904099250468))
)
issueRows <- character()
for (d in issue) {
  t <- c(0.2, 0.4, 0.6, 0.8, 1)
  target <- spent(d$family, 0.05, 0.8) - spent(d$family, 0.05, 0.6)
  c4 <- uniroot(function(c) crossing(t, c(d$critical, c), d$futility, 4, c) - target, c(0.5, 6), tol = 1e-12)$root
  type <- if (d$family == "pocock") "asP" else "asOF"
  plain <- getDesignGroupSequential(kMax = 5, alpha = 0.05, sided = 2, typeOfDesign = type, tolerance = 1e-10)$criticalValues
  old <- c(d$critical, c4, plain[5])
  withRegions <- sum(vapply(1:4, function(j) crossing(t, old, if (j > 1) d$futility[1:(j - 1)] else NULL, j, old[j]), 0))
  withoutRegions <- sum(vapply(1:4, function(j) crossing(t, old, NULL, j, old[j]), 0))
  issueRows <- c(issueRows, sprintf('{"family": "%s", "critical": %s, "futility": %s, "oldLook4": %s, "oldLook5": %s, "pAtOldLook4WithRegions": %s, "pAtOldLook4WithoutRegions": %s, "missOld": %s, "plain": %s}',
    d$family, arr(d$critical), arr(d$futility), num(c4), num(plain[5]), num(withRegions), num(withoutRegions), num(miss(t, old)), arr(plain)))
}

early <- c(0.2, 0.4, 0.6, 0.8)
earlyRows <- character()
for (family in c("obrien-fleming", "pocock")) {
  cumulative <- c(vapply(early[1:3], function(t) spent(family, 0.05, t), 0), 0.05)
  d <- getDesignGroupSequential(kMax = 4, alpha = 0.05, sided = 2, typeOfDesign = "asUser", informationRates = early / 0.8,
                                userAlphaSpending = cumulative, tolerance = 1e-10)
  earlyRows <- c(earlyRows, sprintf('{"family": "%s", "information": %s, "cumulativeAlpha": %s, "critical": %s}', family, arr(early), arr(cumulative), arr(d$criticalValues)))
}

fractions <- c(0.2, 0.4, 0.6, 0.8, 1)
information <- c(0.17, 0.34, 0.5, 0.69, 0.85)
observedRows <- character()
for (family in c("obrien-fleming", "pocock")) {
  cumulative <- vapply(fractions, function(t) spent(family, 0.05, t), 0)
  d <- getDesignGroupSequential(kMax = 5, alpha = 0.05, sided = 2, typeOfDesign = "asUser", informationRates = information / 0.85,
                                userAlphaSpending = cumulative, tolerance = 1e-10)
  observedRows <- c(observedRows, sprintf('{"family": "%s", "fractions": %s, "information": %s, "cumulativeAlpha": %s, "critical": %s}', family, arr(fractions), arr(information), arr(cumulative), arr(d$criticalValues)))
}

set.seed(51)
pairs <- 30
rows <- data.frame(pair = integer(), rater = integer(), vote = numeric())
for (i in 1:pairs) {
  k <- if (i %% 7 == 0) 2 else 3
  for (r in sample(1:12, k)) rows <- rbind(rows, data.frame(pair = i, rater = r, vote = sample(c(-1, 0, 1), 1, prob = c(0.45, 0.1, 0.45))))
}
u <- ifelse(1:pairs <= 18, sqrt(0.6 / 18), sqrt(0.3 / 12))
k <- as.vector(table(factor(rows$pair, levels = 1:pairs)))
rows$w <- u[rows$pair] / k[rows$pair]
rows$id <- seq_len(nrow(rows))
m <- lm(vote ~ 1, data = rows, weights = w)
comp <- function(f) as.numeric(vcovCL(m, cluster = f, type = "HC0", cadjust = FALSE)) * sum(u)^2
judgments <- paste(sprintf('{"pair": %d, "rater": %d, "vote": %d}', rows$pair - 1, rows$rater, as.integer(rows$vote)), collapse = ", ")

cat("{\n")
cat(sprintf('  "source": "R %s: pt; rpact %s getDesignGroupSequential (sided = 2, tolerance = 1e-10); mvtnorm %s pmvnorm (Miwa, 4097 steps); sandwich %s vcovCL (HC0, cadjust = FALSE); by scripts/sequential-inference-reference.R",\n',
  paste(R.version$major, R.version$minor, sep = "."), as.character(packageVersion("rpact")), as.character(packageVersion("mvtnorm")), as.character(packageVersion("sandwich"))))
cat(sprintf('  "studentT": [%s],\n', paste(tRows, collapse = ", ")))
cat(sprintf('  "bindingPValue": {"fractions": %s, "critical": %s, "futility": %s, "cases": [%s]},\n', arr(rates), arr(crit), arr(fut), paste(caseRows, collapse = ", ")))
cat(sprintf('  "coverage": [%s],\n', paste(coverageRows, collapse = ", ")))
cat(sprintf('  "issueDesigns": [%s],\n', paste(issueRows, collapse = ", ")))
cat(sprintf('  "endsEarly": [%s],\n', paste(earlyRows, collapse = ", ")))
cat(sprintf('  "observedInformation": [%s],\n', paste(observedRows, collapse = ", ")))
cat(sprintf('  "clustered": {"weights": %s, "judgments": [%s], "raters": %d, "byRater": %s, "byPair": %s, "byJudgment": %s, "mean": %s}\n',
  arr(u), judgments, length(unique(rows$rater)), num(comp(~rater)), num(comp(~pair)), num(comp(~id)), num(coef(m)[[1]])))
cat("}\n")
