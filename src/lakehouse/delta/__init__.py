"""Delta tooling that reads tables by their transaction log: inspector, conformance, audit."""
