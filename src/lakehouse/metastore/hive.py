"""The Hive schema of a metastore database: created once, in one JVM, then verified by every
later Spark process (`lakehouse metastore init`, and `start` for the local server)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable
from pathlib import Path

from dbt.adapters.sparkdelta.session import command_line_conf, redact_jdbc_url
from lakehouse import processes
from lakehouse.metastore.settings import MetastoreError, MetastoreSettings, check_driver

DRIVER_CLASS = "org.postgresql.Driver"
HIVE_SCHEMA_VERSION = "2.3.0"


def hive_metastore_jar() -> Path:
    jars = sorted((processes.spark_home() / "jars").glob("hive-metastore-*.jar"))
    if not jars:
        raise MetastoreError(f"No hive-metastore jar in {processes.spark_home() / 'jars'}.")
    return jars[-1]


def metadata_classes(jar: Path | None = None) -> list[str]:
    """The persistent classes of Hive's metastore, from its JDO metadata (package.jdo)."""
    with zipfile.ZipFile(jar or hive_metastore_jar()) as archive:
        root = ET.fromstring(archive.read("package.jdo"))
    return [
        f"{package.get('name')}.{cls.get('name')}"
        for package in root.iter("package")
        for cls in package.iter("class")
    ]


def metadata_tables(jar: Path | None = None) -> set[str]:
    """The tables (upper case) Hive's JDO metadata maps its classes and join tables to; a
    class stored embedded in another's table has none of its own."""
    with zipfile.ZipFile(jar or hive_metastore_jar()) as archive:
        root = ET.fromstring(archive.read("package.jdo"))
    return {
        element.get("table").upper()
        for element in root.iter()
        if element.get("table")
        and (element.tag == "field" or element.get("embedded-only") != "true")
    }


def describe_tables(names: Iterable[str]) -> str:
    """What `metastore start` and `metastore status` both say of a metastore database's tables:
    how many of Hive's metadata tables (metadata_tables) it holds, and which others (DataNucleus
    adds its SEQUENCE_TABLE of id sequences: 44 of Hive's plus 1 make the 45 that PostgreSQL
    lists)."""
    found = {name.upper() for name in names}
    expected = metadata_tables()
    text = f"{len(found & expected)} of {len(expected)} Hive metadata tables"
    others = sorted(found - expected)
    return f"{text}, plus {', '.join(others)}" if others else text


def init_schema(
    settings: MetastoreSettings, url: str, password: str | None, timeout: float = 600.0
) -> str:
    """Create the Hive schema in the database at `url` unless it holds one; check every table
    exists afterwards. Runs in a child process (its own JVM), so a caller's Spark session is
    untouched. Returns what was done."""
    check_driver(settings.driver)
    settings.directory.mkdir(parents=True, exist_ok=True)
    env = {
        **processes.spark_env(),
        "LAKEHOUSE_METASTORE_URL": url,
        "LAKEHOUSE_METASTORE_USER": settings.user,
        "LAKEHOUSE_METASTORE_PASSWORD": password or "",
        "LAKEHOUSE_METASTORE_DRIVER": str(settings.driver),
        "LAKEHOUSE_INIT_WAREHOUSE": settings.session.warehouse_dir,
        "LAKEHOUSE_INIT_HOME": str(settings.directory / "init-session"),
    }
    with open(settings.init_log, "ab") as log:
        offset = log.tell()
        try:
            result = subprocess.run(
                [sys.executable, "-m", "lakehouse.metastore", "--init-schema"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=log,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise MetastoreError(
                f"Initialising the Hive schema at {redact_jdbc_url(url)} took more than "
                f"{timeout:.0f}s. Log: {settings.init_log}"
            ) from None
    report = result.stdout.decode("utf-8", "replace").strip()
    if result.returncode != 0:
        output = processes.output_since(settings.init_log, offset).strip().splitlines()
        reason = report or (output[-1] if output else "no output")
        raise MetastoreError(
            f"Initialising the Hive schema at {redact_jdbc_url(url)} failed: {reason} "
            f"Log: {settings.init_log}"
        )
    return report


def _init_schema_here() -> int:
    """The child process of `init_schema`: one JVM, DataNucleus, then Hive once."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    url = os.environ["LAKEHOUSE_METASTORE_URL"]
    user = os.environ["LAKEHOUSE_METASTORE_USER"]
    password = os.environ["LAKEHOUSE_METASTORE_PASSWORD"]
    home = Path(os.environ["LAKEHOUSE_INIT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    jdo = {
        "javax.jdo.option.ConnectionURL": url,
        "javax.jdo.option.ConnectionDriverName": DRIVER_CLASS,
        "javax.jdo.option.ConnectionUserName": user,
        "javax.jdo.option.ConnectionPassword": password,
    }
    conf = SparkConf(loadDefaults=False).setAll(
        [
            ("spark.master", "local[1]"),
            ("spark.app.name", "lakehouse-metastore-init"),
            ("spark.driver.memory", "512m"),
            ("spark.driver.extraClassPath", os.environ["LAKEHOUSE_METASTORE_DRIVER"]),
            ("spark.driver.extraJavaOptions", f"-Dderby.system.home={home}"),
            ("spark.ui.enabled", "false"),
            ("spark.sql.catalogImplementation", "hive"),
            ("spark.sql.warehouse.dir", os.environ["LAKEHOUSE_INIT_WAREHOUSE"]),
            *((f"spark.hadoop.{key}", value) for key, value in jdo.items()),
            # Hive, started once below, records the schema version it finds missing.
            ("spark.hadoop.hive.metastore.schema.verification", "false"),
            ("spark.hadoop.hive.metastore.schema.verification.record.version", "true"),
        ]
    )
    gateway = launch_gateway(command_line_conf(dict(conf.getAll())))
    jvm = gateway.jvm
    connection = _jdbc_connection(jvm, url, user, password)
    try:
        existing = _tables(gateway, connection)
        if "VERSION" in existing and _schema_version(connection):
            missing = metadata_tables() - existing
            if missing:
                print(f"the metastore lacks tables {sorted(missing)}; it was not made here.")
                return 1
            print(
                f"schema {_schema_version(connection)} already there: {describe_tables(existing)}"
            )
            return 0
        _create_tables(jvm, jdo)
        # Hive's own start: the VERSION row, the default database, the admin and public roles.
        SparkContext(conf=conf, gateway=gateway)
        spark = SparkSession.builder.enableHiveSupport().getOrCreate()
        spark.sql("show databases").collect()
        tables = _tables(gateway, connection)
        missing = metadata_tables() - tables
        version = _schema_version(connection)
        spark.stop()
    finally:
        connection.close()
    if missing or version != HIVE_SCHEMA_VERSION:
        print(f"after initialisation: tables missing {sorted(missing)}, version {version!r}.")
        return 1
    print(f"schema {version} initialised: {describe_tables(tables)}")
    return 0


def _jdbc_connection(jvm, url: str, user: str, password: str):
    properties = jvm.java.util.Properties()
    properties.setProperty("user", user)
    properties.setProperty("password", password)
    return jvm.java.sql.DriverManager.getConnection(url, properties)


def _tables(gateway, connection) -> set[str]:
    types = gateway.new_array(gateway.jvm.java.lang.String, 1)
    types[0] = "TABLE"
    result = connection.getMetaData().getTables(None, None, "%", types)
    names = set()
    while result.next():
        names.add(result.getString("TABLE_NAME").upper())
    result.close()
    return names


def _schema_version(connection) -> str | None:
    statement = connection.createStatement()
    try:
        result = statement.executeQuery('select "SCHEMA_VERSION" from "VERSION"')
        return result.getString(1) if result.next() else None
    finally:
        statement.close()


def _create_tables(jvm, jdo: dict[str, str]) -> None:
    """Every table of Hive's JDO metadata, with the DataNucleus settings Hive uses."""
    hive_conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    for key, value in jdo.items():
        hive_conf.set(key, value)
    hive_conf.set("datanucleus.schema.autoCreateAll", "true")
    properties = jvm.java.util.Properties()
    # As Hive's ObjectStore does: every datanucleus.* and javax.jdo.* setting of the HiveConf.
    entries = hive_conf.iterator()
    while entries.hasNext():
        entry = entries.next()
        if entry.getKey().startswith(("datanucleus.", "javax.jdo.")):
            properties.setProperty(entry.getKey(), hive_conf.get(entry.getKey()))
    factory = jvm.javax.jdo.JDOHelper.getPersistenceManagerFactory(properties)
    try:
        classes = jvm.java.util.HashSet()
        for name in metadata_classes():
            classes.add(name)
        store = factory.getNucleusContext().getStoreManager()
        store.createSchemaForClasses(classes, jvm.java.util.Properties())
    finally:
        factory.close()
