"""The command lines and outputs of the tools clusterbench stands in for (IOR
and mdtest): their options as data, a pasted line translated into kernel
parameters, and their output printed from stored runs."""
