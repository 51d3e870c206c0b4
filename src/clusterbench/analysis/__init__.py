"""Analysis of stored samples: statistics, comparisons, gates, trends, the run
history summed up, and a cluster run's findings (analysis/cluster/). Pure
computation over samples and store rows: nothing here measures or prints."""
