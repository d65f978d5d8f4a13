# Reference boundaries for test/numbers/group-sequential.test.ts, computed with R's rpact (Debian r-cran-rpact).
# Run: Rscript scripts/sequential-boundaries-rpact.R > test/fixtures/sequential-boundaries-rpact.json
# Two-sided Lan-DeMets alpha spending (asOF, asP) on a grid of designs: 2-10 equally spaced looks and a set of unequal
# information fractions, alpha 0.05 and 0.01. rpact's tolerance is tightened to 1e-10 (its default, 1e-8, on the
# probability scale, leaves bounds above 5 good to only a few decimals). rpact prints bounds above 7.5 as Inf: kept
# as null here. The futility designs (below) are described where they are made.
suppressMessages(library(rpact))

# JSON written by hand (no jsonlite on a plain Debian R): numbers to 17 significant digits, null for no bound.
num <- function(v) if (is.finite(v)) sprintf("%.17g", v) else "null"
arr <- function(v) paste0("[", paste(vapply(v, num, ""), collapse = ", "), "]")

designs <- list()
add <- function(rates, alpha, type) {
  d <- getDesignGroupSequential(kMax = length(rates), alpha = alpha, sided = 2, typeOfDesign = type,
                                informationRates = rates, tolerance = 1e-10)
  crit <- d$criticalValues
  designs[[length(designs) + 1]] <<- list(
    family = if (type == "asOF") "obrien-fleming" else "pocock",
    alpha = alpha,
    fractions = rates,
    critical = crit,
    cumulativeAlpha = d$alphaSpent
  )
}
unequal <- list(c(0.2, 0.7, 1), c(0.1, 0.2, 0.5, 0.51, 1), c(0.35, 0.6, 0.9, 1), c(0.15, 0.4, 1), c(0.6, 0.97, 1),
                c(0.25, 0.45, 0.62, 0.8, 0.93, 1))
futilityOnly <- Sys.getenv("FUTILITY_ONLY") == "1"
if (!futilityOnly) for (type in c("asOF", "asP")) {
  for (alpha in c(0.05, 0.01)) {
    for (k in 2:10) add((1:k) / k, alpha, type)
    for (rates in unequal) add(rates, alpha, type)
  }
}
designJson <- vapply(designs, function(d) sprintf(
  '    {"family": "%s", "alpha": %s, "fractions": %s, "critical": %s, "cumulativeAlpha": %s}',
  d$family, num(d$alpha), arr(d$fractions), arr(unlist(lapply(d$critical, function(v) if (is.null(v)) Inf else v))),
  arr(d$cumulativeAlpha)), "")
# Futility (issue 44): two-sided beta spending of the same family (bsOF with asOF, bsP with asP), binding and not.
# rpact calls it experimental; its nested bisections make a design of 10 looks take minutes.
# The drift (rpact's `shift`, on the z scale at full information) comes from rpact's own C++ routine, which returns it.
futility <- list()
addFutility <- function(k, alpha, beta, type, binding) {
  rates <- (1:k) / k
  d <- suppressWarnings(getDesignGroupSequential(kMax = k, alpha = alpha, sided = 2, typeOfDesign = type,
    typeBetaSpending = sub("as", "bs", type), beta = beta, bindingFutility = binding, informationRates = rates, tolerance = 1e-10))
  plain <- getDesignGroupSequential(kMax = k, alpha = alpha, sided = 2, typeOfDesign = type, informationRates = rates, tolerance = 1e-10)
  r <- suppressWarnings(rpact:::getDesignGroupSequentialBetaSpendingCpp(pmin(plain$criticalValues, 8), k, d$userAlphaSpending,
    d$userBetaSpending, rates, binding, 1e-10, type, d$typeBetaSpending, d$gammaA, d$gammaB, alpha, beta, 2, d$betaAdjustment,
    d$twoSidedPower))
  line <- sprintf(
    '    {"family": "%s", "alpha": %s, "beta": %s, "binding": %s, "fractions": %s, "critical": %s, "futility": %s, "drift": %s, "betaSpent": %s}',
    if (type == "asOF") "obrien-fleming" else "pocock", num(alpha), num(beta), if (binding) "true" else "false", arr(rates),
    arr(d$criticalValues), arr(ifelse(is.na(d$futilityBounds), Inf, d$futilityBounds)), num(r$shift), arr(d$betaSpent))
  futility[[length(futility) + 1]] <<- line
  # Printed as made when only futility designs are asked for: a long run's lines are kept if it is stopped.
  if (futilityOnly) { cat(line, ",\n", sep = ""); flush(stdout()) }
}
# Beyond 5 looks, beta 0.2 only: a design of 10 looks takes rpact minutes. FUTILITY_LOOKS="6:10" with FUTILITY_ONLY=1
# prints just those designs' lines as each is made (a trailing comma each), to make the long part apart and splice it in.
looks <- eval(parse(text = Sys.getenv("FUTILITY_LOOKS", "2:10")))
for (type in strsplit(Sys.getenv("FUTILITY_TYPES", "asOF,asP"), ",")[[1]]) for (binding in c(FALSE, TRUE)) for (alpha in c(0.05, 0.01)) for (beta in c(0.2, 0.1))
  for (k in looks) if (k <= 5 || beta == 0.2) addFutility(k, alpha, beta, type, binding)
if (futilityOnly) quit(save = "no")
x <- c(-7, -3.2, -1, 0, 0.5, 1.959964, 4.1, 6.3)
p <- c(1e-12, 1e-6, 0.0125, 0.3, 0.5, 0.975, 0.999999)
cat("{\n")
cat(sprintf('  "source": "R %s.%s, rpact %s: getDesignGroupSequential(sided = 2, typeOfDesign = asOF | asP, tolerance = 1e-10); pnorm, qnorm. Made by scripts/sequential-boundaries-rpact.R",\n',
            R.version$major, R.version$minor, as.character(packageVersion("rpact"))))
cat(sprintf('  "normal": {"x": %s, "cdf": %s, "p": %s, "quantile": %s},\n', arr(x), arr(pnorm(x)), arr(p), arr(qnorm(p))))
cat('  "designs": [\n')
cat(paste(designJson, collapse = ",\n"))
cat("\n  ],\n")
cat('  "futilitySource": "rpact getDesignGroupSequential(sided = 2, typeOfDesign = asOF | asP, typeBetaSpending = bsOF | bsP, beta, bindingFutility, tolerance = 1e-10); futility null where rpact gives NA (no futility bound at that look); drift: getDesignGroupSequentialBetaSpendingCpp()$shift",\n')
cat('  "futilityDesigns": [\n')
cat(paste(unlist(futility), collapse = ",\n"))
cat("\n  ]\n}\n")
