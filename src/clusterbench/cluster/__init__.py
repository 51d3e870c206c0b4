"""A cluster as the unit of measurement (`clusterbench run cluster`,
docs/cluster.md): per-node figures side by side, every link, collective
scaling, and what is odd among them."""
