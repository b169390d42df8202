"""Reliability and safety end to end, one module per concern: concurrent writers and retries
(test_concurrency), crashes and reruns (test_crashes), bad input and dangerous operations
(test_bad_input), the Thrift endpoint's clients and faults (test_thrift_clients) and secrets
(test_secrets). Every class asserts on the tables (rows, versions, history) that nothing was
lost or duplicated, and adds what it exercised to the `reliability exercised:` line at the end
of the run (also target/reliability.json).

How the concurrency is made honest: Delta's optimistic concurrency is per table log, not per
process, so writers are threads of the pytest JVM sharing its SparkSession (each statement its
own Delta transaction, the same conflict detection as across processes) and, in the endpoint
class, separate `dbt` processes that are clients of one Spark Thrift endpoint. Crashes are
separate processes (their own JVM and LAKEHOUSE_HOME: Derby admits one process per home) that
SIGKILL themselves and their JVM at named points (python_tests/fault_injection.py).
"""
