"""The upstream the functional tests of the change feed share: a Delta table `people` (id,
name, city) with its change data feed on, as the source `raw.people`, written commit by
commit."""

from __future__ import annotations

import json

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: people
"""


def _literal(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _values(rows: dict[int, tuple]) -> str:
    return ", ".join(
        f"({key}, {_literal(name)}, {_literal(city)})" for key, (name, city) in rows.items()
    )


class Upstream:
    """The upstream Delta table `people` (change data feed on) and what the test knows of it."""

    def __init__(self, project):
        self.project = project
        self.table = f"{project.test_schema}.people"
        self.rows: dict[int, tuple] = {}

    def create(self, rows: dict[int, tuple]) -> None:
        self.project.run_sql(
            f"create table {self.table} (id int, name string, city string) using delta "
            "tblproperties ('delta.enableChangeDataFeed' = 'true')"
        )
        self.insert(rows)

    def insert(self, rows: dict[int, tuple]) -> None:
        self.project.run_sql(f"insert into {self.table} values {_values(rows)}")
        self.rows.update(rows)

    def update(self, key: int, name, city) -> None:
        self.project.run_sql(
            f"update {self.table} set name = {_literal(name)}, city = {_literal(city)} "
            f"where id = {key}"
        )
        self.rows[key] = (name, city)

    def delete(self, keys: list[int]) -> None:
        self.project.run_sql(f"delete from {self.table} where id in ({', '.join(map(str, keys))})")
        for key in keys:
            self.rows.pop(key)

    def merge(self, rows: dict[int, tuple]) -> None:
        """Updates and inserts in one commit, as another writer's MERGE makes them."""
        self.project.run_sql(
            f"merge into {self.table} as t using (select * from values {_values(rows)} "
            "as s(id, name, city)) as s on t.id = s.id when matched then update set * "
            "when not matched then insert *"
        )
        self.rows.update(rows)

    def version(self) -> int:
        return newest_commit(self.project, self.table)[0]


def newest_commit(project, table: str) -> tuple[int, dict | None]:
    """The newest version of a table and the upstream versions its commit records, if any."""
    row = project.run_sql(f"describe history {table} limit 1", fetch="one")
    metadata = row[USER_METADATA]
    return row[0], json.loads(metadata).get("sparkdelta_cdf_watermark") if metadata else None


USER_METADATA = 13  # DESCRIBE HISTORY's column userMetadata
