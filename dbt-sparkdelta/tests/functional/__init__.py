"""dbt's standard adapter test suite (dbt-tests-adapter) on the sparkdelta adapter, on a real
Spark with Delta; the targets it runs on are in conftest.py."""
