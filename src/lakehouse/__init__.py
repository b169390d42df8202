"""Runtime glue for the Delta Lake lakehouse: Spark session, data generator, CLI."""
