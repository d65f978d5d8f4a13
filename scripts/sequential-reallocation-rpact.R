# Reference bounds for a comparison whose maximum was raised by reallocation (test/numbers/group-sequential.test.ts,
# boundAfter), computed with R's rpact (Debian r-cran-rpact).
# Run: Rscript scripts/sequential-reallocation-rpact.R > test/fixtures/sequential-reallocation-rpact.json
# Each scenario gives the decisive pairs d_j at each look and the comparison's maximum N_j at that look (raised between
# looks). The looks' correlations depend on the information reached, d_j / N_last (the last look, every pair complete,
# at 1); the cumulative alpha spent at look j is the spending function at that look's own fraction d_j / N_j (never
# less than before). rpact's user-defined spending (typeOfDesign = "asUser", sided = 2) at those information rates
# and cumulative alphas gives the bounds, independently of our recursion.
suppressMessages(library(rpact))

num <- function(v) if (is.finite(v)) sprintf("%.17g", v) else "null"
arr <- function(v) paste0("[", paste(vapply(v, num, ""), collapse = ", "), "]")

# rpact's asOF and asP, two-sided (getSpendingValueCpp with sided = 2).
spent <- function(family, alpha, t) {
  if (t >= 1) return(alpha)
  if (family == "pocock") return(alpha * log(1 + (exp(1) - 1) * t))
  4 * (1 - pnorm(qnorm(1 - alpha / 4) / sqrt(t)))
}

scenarios <- list(
  list(family = "obrien-fleming", alpha = 0.025, decisive = c(10, 20, 30), maxima = c(20, 30, 30), final = TRUE),
  list(family = "pocock", alpha = 0.025, decisive = c(10, 20, 30), maxima = c(20, 30, 30), final = TRUE),
  list(family = "obrien-fleming", alpha = 0.05, decisive = c(8, 16, 30, 44), maxima = c(40, 40, 50, 50), final = FALSE),
  list(family = "pocock", alpha = 0.05, decisive = c(8, 16, 30, 44), maxima = c(40, 40, 50, 50), final = FALSE),
  list(family = "obrien-fleming", alpha = 0.05, decisive = c(25, 45, 70), maxima = c(50, 60, 80), final = FALSE),
  list(family = "pocock", alpha = 0.01, decisive = c(25, 45, 70), maxima = c(50, 60, 80), final = FALSE)
)

out <- character()
for (s in scenarios) {
  k <- length(s$decisive)
  last <- s$maxima[k]
  own <- pmin(1, s$decisive / s$maxima)
  if (s$final) own[k] <- 1
  rates <- s$decisive / last
  if (s$final) rates[k] <- 1
  cumulative <- cummax(vapply(own, function(t) spent(s$family, s$alpha, t), 0))
  # rpact wants the user spending to end at alpha: a design whose last look is not the final one is run to an extra
  # final look at information 1, which changes no earlier bound.
  if (rates[k] < 1) {
    rpactRates <- c(rates, 1)
    rpactSpending <- c(cumulative, s$alpha)
  } else {
    rpactRates <- rates
    rpactSpending <- cumulative
  }
  d <- getDesignGroupSequential(kMax = length(rpactRates), alpha = s$alpha, sided = 2, typeOfDesign = "asUser",
                                informationRates = rpactRates, userAlphaSpending = rpactSpending, tolerance = 1e-10)
  out <- c(out, sprintf(
    '    {"family": "%s", "alpha": %s, "decisive": %s, "maxima": %s, "final": %s, "ownFractions": %s, "informationRates": %s, "cumulativeAlpha": %s, "critical": %s}',
    s$family, num(s$alpha), arr(s$decisive), arr(s$maxima), if (s$final) "true" else "false", arr(own), arr(rates),
    arr(cumulative), arr(d$criticalValues[1:k])))
}
cat("{\n")
cat(sprintf('  "source": "rpact %s getDesignGroupSequential(sided = 2, typeOfDesign = \\"asUser\\", tolerance = 1e-10), by scripts/sequential-reallocation-rpact.R",\n', as.character(packageVersion("rpact"))))
cat('  "scenarios": [\n')
cat(paste(out, collapse = ",\n"))
cat("\n  ]\n}\n")
