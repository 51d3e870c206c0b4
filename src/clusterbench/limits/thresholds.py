"""Every threshold of the physical-limit rules, once, with the reason it
has the value it has. A rule in this package compares against one of
these, never against a literal."""
from __future__ import annotations

# A figure may exceed a rate that bounds it (a link's nominal rate, a PCIe
# link's computed rate, a GPU memory's peak) by this factor before it is
# called impossible: a token bucket lets one burst through at once, the
# timer's granularity shortens a short transfer, and a nominal rate is
# rounded (PCIe's 63.0 GB/s, a NIC's "1000 Mb/s"): the test bed's tcp pairs
# on tbf-shaped 1 Gbit/s links measure up to 1.02 Gbit/s alone
# (docs/testbed.md, test_testbed_trunk). One value for every
# "faster than its link" rule: before, the I/O checks used 1.0, the
# network-mount labels 1.05 and the GPU checks 1.02.
RATE_SLACK = 1.05

# A buffered or cold figure may beat the same directory's O_DIRECT figure
# by readahead and write merging; above this factor it came from a cache.
# 20 %: readahead of a sequential read legitimately gains that much on an
# SSD whose direct reads are not queued deep.
CACHE_MARGIN = 1.2

# A read out of a file at more than this share of stream's copy rate (the
# same run's memory bandwidth) is a memory copy: a page-cache hit is one
# memcpy, while the fastest local NVMe arrays reach a fraction of a
# socket's memory bandwidth.
STREAM_SHARE = 0.5

# A pageable host copy faster than the pinned copy of the same size,
# direction and GPU by more than this is doubtful: 10 %, since pageable
# copies of a few KiB can tie with pinned ones.
PAGEABLE_MARGIN = 1.1

# A network-mount figure at >= 70 % of the link's nominal rate is taken as
# link-bound: TCP/IP and the file protocol's headers and round trips cost
# 5-20 % of a Gigabit link (GlusterFS over a 1 Gbit/s test-bed link:
# 107-119 MB/s, 86-95 %).
LINK_BINDS = 0.70

# A network-mount figure reaching this share of the server's local disk
# rate (when that disk is slower than the link) is disk-bound: the file
# protocol adds latency per request, so a remote read rarely gets the
# whole of the local rate.
DISK_BINDS = 0.80

# A host copy that reached less than this share of the link at the card's
# best PCIe generation, on a link the snapshot saw below it, is said to be
# limited by it (an idle GPU lowers its generation, a busy one restores it:
# only a slow copy says the link stayed down).
TRAINED_DOWN_SHARE = 0.6

# A measured clock this far from the nominal one says more about the
# machine than about the CPU: a turbo bin reaches 1.3-1.5x a base clock, a
# deep power cap or thermal throttling halves it.
CLOCK_FAR_RATIO = 1.5
