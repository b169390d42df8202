"""The lakehouse project's tools: the `lakehouse` CLI, the shop's data and model logic, Delta
log tools, reports and benchmarks. They use the sparkdelta adapter; it never imports them."""
