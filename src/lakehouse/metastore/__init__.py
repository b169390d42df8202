"""A shared Hive metastore on PostgreSQL: `lakehouse metastore start|stop|status|init`.

The embedded Derby metastore (the default) admits one process at a time and keeps a view's
text in a VARCHAR(32672). A metastore in PostgreSQL lets the endpoint, embedded dbt runs and
other clients share one catalog at once. The profile's `local` output points the session at
it when LAKEHOUSE_METASTORE_URL is set (docs/metastore.md).

`start` runs a PostgreSQL server from Debian's packages (`postgresql`) for local use: data
directory, log and socket under `$LAKEHOUSE_HOME/metastore-pg/`, listening on 127.0.0.1 (or
LAKEHOUSE_METASTORE_BIND_HOST, for other hosts) at LAKEHOUSE_METASTORE_PORT (default 5433,
beside a system PostgreSQL on 5432). It creates the `metastore` database and its owner,
initialises the Hive schema once, and prints the variables to export. `init` initialises the
schema of any PostgreSQL metastore (production: once, before the first Spark process connects).

Why the schema is created up front, in one process: Spark lets Hive create the metastore tables
on first use (`datanucleus.schema.autoCreateAll`) only for embedded Derby. Several processes
doing that at once on a shared database deadlock on each other's DDL, and Hive creates some
tables only when first needed, so "one serial Spark session that exercises the catalog" leaves
tables for later processes to race on. Here one JVM creates every table of Hive's metadata
(package.jdo in the hive-metastore jar) through DataNucleus, with exactly the DataNucleus
settings Hive itself uses (read from HiveConf, so names and types match what Hive expects),
then starts Hive's metastore once to record the schema version and create the default
database. Every later process runs with Hive's defaults: no DDL, schema version verified.

`settings` holds what both parts read (where, who, which driver), `server` the local
PostgreSQL's lifecycle, `hive` the schema; `python -m lakehouse.metastore --init-schema` is the
schema's child process.
"""

from __future__ import annotations

from dbt.adapters.sparkdelta.session import redact_jdbc_url
from lakehouse.metastore.hive import (
    DRIVER_CLASS,
    HIVE_SCHEMA_VERSION,
    describe_tables,
    hive_metastore_jar,
    init_schema,
    metadata_classes,
    metadata_tables,
)
from lakehouse.metastore.server import (
    SERVER_ACCOUNT,
    exports,
    server_binaries,
    server_pid,
    start,
    status,
    stop,
)
from lakehouse.metastore.settings import (
    DATABASE,
    DEFAULT_DRIVER,
    DEFAULT_PORT,
    DEFAULT_USER,
    INSTALL_HINT,
    MetastoreError,
    MetastoreSettings,
    check_driver,
)

__all__ = [
    "DATABASE",
    "DEFAULT_DRIVER",
    "DEFAULT_PORT",
    "DEFAULT_USER",
    "DRIVER_CLASS",
    "HIVE_SCHEMA_VERSION",
    "INSTALL_HINT",
    "MetastoreError",
    "MetastoreSettings",
    "SERVER_ACCOUNT",
    "check_driver",
    "describe_tables",
    "exports",
    "hive_metastore_jar",
    "init_schema",
    "metadata_classes",
    "metadata_tables",
    "redact_jdbc_url",
    "server_binaries",
    "server_pid",
    "start",
    "status",
    "stop",
]
