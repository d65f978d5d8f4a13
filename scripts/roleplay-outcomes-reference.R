# Reference values for the role-play outcome statistics (src/analysis/goal-comparison.ts), computed with base R.
# Anscombe's quartet (Anscombe 1973, "Graphs in statistical analysis", The American Statistician 27(1)): four data sets
# with the same correlation, 0.816 to three decimals as published. R ships the data as datasets::anscombe.
# Run: Rscript scripts/roleplay-outcomes-reference.R > test/fixtures/roleplay/anscombe.json
sets <- lapply(1:4, function(i) {
  x <- anscombe[[paste0("x", i)]]
  y <- anscombe[[paste0("y", i)]]
  sprintf('{"x":[%s],"y":[%s],"mean_x":%.15g,"mean_y":%.15g,"sd_y":%.15g,"mean_difference":%.15g,"pearson_r":%.15g}',
          paste(x, collapse = ","), paste(y, collapse = ","), mean(x), mean(y), sd(y), mean(y - x), cor(x, y))
})
cat(sprintf('{"source":"datasets::anscombe in R %s; Anscombe (1973) publishes r = 0.816","sets":[%s]}\n', getRversion(), paste(sets, collapse = ",")))
