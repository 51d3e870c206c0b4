"""A cluster run judged (docs/cluster.md): per-node figures side by side,
every link, collective scaling, and what is odd among them."""
