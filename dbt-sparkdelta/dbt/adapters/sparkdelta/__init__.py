"""dbt adapter plugin `sparkdelta`: dbt-spark + Delta Lake + Python models on open-source Spark.

It declares `spark` as its dependency, so every dbt-spark macro and connection method keeps
working; dispatch looks for `sparkdelta__` macros first, then `spark__`, then `default__`.
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.credentials import SparkDeltaCredentials
from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter
from dbt.include import sparkdelta

Plugin = AdapterPlugin(
    adapter=SparkDeltaAdapter,  # type: ignore[arg-type]
    credentials=SparkDeltaCredentials,
    include_path=sparkdelta.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = ["Plugin", "SparkDeltaAdapter", "SparkDeltaConnectionManager", "SparkDeltaCredentials"]
