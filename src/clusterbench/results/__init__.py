"""What a measurement is: cbk's records parsed, the typed sample and the one
key samples are grouped by, parameters and sizes in their canonical text,
repeated warnings folded."""
