# Independent reference bounds for test/numbers/group-sequential.test.ts, from base R alone (no rpact):
#   Rscript scripts/sequential-boundaries-exact.R > test/fixtures/sequential-boundaries-exact.json
# rpact finds each bound by bisection to a tolerance on the probability scale (1e-10 at its tightest), so a bound in
# the tail, where the density is small, is exact only on that scale (at z = 4.29 its bound is off by 4e-6). Here the
# first three looks of equally spaced two-sided designs are solved directly: look 1 in closed form, looks 2 and 3 by
# adaptive quadrature (integrate, relative tolerance 1e-13, nested for look 3) of the joint normal law of the looks'
# statistics (Jennison & Turnbull 2000, 3.1 and 19.2) and uniroot to 1e-13, spending alpha as rpact's asOF and asP.
spent <- function(family, alpha, t) {
  if (t >= 1) return(alpha)
  if (family == "pocock") return(alpha * log(1 + (exp(1) - 1) * t))
  4 * pnorm(qnorm(alpha / 4, lower.tail = FALSE) / sqrt(t), lower.tail = FALSE)
}
# P(|Z_k| >= c | Z_{k-1} = z): Z_k given Z_{k-1} is normal with mean z r and sd s.
beyond <- function(z, c, r, s) pnorm((-c - r * z) / s) + pnorm((c - r * z) / s, lower.tail = FALSE)
within <- function(z, c, r, s) pnorm((c - r * z) / s) - pnorm((-c - r * z) / s)
quad <- function(f, lo, hi) integrate(f, lo, hi, rel.tol = 1e-13, abs.tol = 0, subdivisions = 5000L)$value
num <- function(v) if (is.finite(v)) sprintf("%.17g", v) else "null"

designs <- character(0)
for (family in c("obrien-fleming", "pocock")) for (alpha in c(0.05, 0.01)) for (k in 3:10) {
  t <- (1:3) / k
  a <- vapply(t, function(x) spent(family, alpha, x), 0)
  r2 <- sqrt(t[1] / t[2]); s2 <- sqrt((t[2] - t[1]) / t[2])
  r3 <- sqrt(t[2] / t[3]); s3 <- sqrt((t[3] - t[2]) / t[3])
  c1 <- qnorm(a[1] / 2, lower.tail = FALSE)
  cross2 <- function(c) quad(function(z) dnorm(z) * beyond(z, c, r2, s2), -c1, c1)
  c2 <- uniroot(function(c) cross2(c) - (a[2] - a[1]), c(0.5, 9), tol = 1e-13)$root
  # Look 3: over the paths inside both earlier bounds; the inner integral is over Z_2 given Z_1.
  cross3 <- function(c) quad(function(z1) vapply(z1, function(x) dnorm(x) * quad(function(z2) dnorm((z2 - r2 * x) / s2) / s2 * beyond(z2, c, r3, s3), -c2, c2), 0), -c1, c1)
  c3 <- uniroot(function(c) cross3(c) - (a[3] - a[2]), c(0.5, 9), tol = 1e-13)$root
  designs <- c(designs, sprintf('    {"family": "%s", "alpha": %s, "looks": %d, "critical": [%s, %s, %s]}', family, num(alpha), k, num(c1), num(c2), num(c3)))
}
cat("{\n")
cat(sprintf('  "source": "R %s.%s base only: qnorm for look 1, integrate (rel.tol 1e-13) and uniroot (tol 1e-13) for looks 2 and 3 of equally spaced designs, spending as rpact asOF/asP. Made by scripts/sequential-boundaries-exact.R",\n', R.version$major, R.version$minor))
cat('  "designs": [\n')
cat(paste(designs, collapse = ",\n"))
cat("\n  ]\n}\n")
