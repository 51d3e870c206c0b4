"""Running measurements: the plan, the step engine every step goes through,
the runner, the cluster fan-out (run/cluster/), the run under each
condition, progress and cbk's private directories."""
