"""A cluster as the unit of measurement (`clusterbench run cluster`,
docs/cluster.md): the suite's per-node steps on every node, every link,
collective scaling; judged by clusterbench.analysis.cluster."""
