"""`strategy: cdf` snapshots: the check strategy over the keys the upstream's change data feed
names. Each cdf snapshot runs beside its check twin (same upstream, same hard_deletes mode) in
the same `dbt snapshot`, and after every run the two hold the same history: the same rows of
every version, current or closed, deleted or not, opened and closed in the same runs."""

from __future__ import annotations

import json
import os
import random

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from .people_upstream import SOURCES_YML, Upstream, newest_commit

HARD_DELETES = ("ignore", "invalidate", "new_record")
NAMES = ("Ann", "Bo", "O'Brien", "Zoë", None)  # a quote and a NULL stay what they are
CITIES = ("Oslo", "Lyon", "Porto", None)


def _snapshots_yml(modes: tuple[str, ...]) -> str:
    snapshots = []
    for mode in modes:
        for strategy in ("check", "cdf"):
            config = {"unique_key": "id", "strategy": strategy, "hard_deletes": mode}
            if strategy == "check":
                config["check_cols"] = "all"
            snapshots.append(
                {
                    "name": f"{strategy}_{mode}",
                    "relation": "source('raw', 'people')",
                    "config": config,
                }
            )
    return json.dumps({"snapshots": snapshots})


def history(project, snapshot: str, mode: str) -> list[tuple]:
    """A snapshot's rows with each timestamp replaced by the rank of its run among the runs
    that wrote the table, so that two snapshots written in the same runs compare equal."""
    deleted = ", dbt_is_deleted" if mode == "new_record" else ""
    rows = project.run_sql(
        f"select id, name, city, dbt_valid_from, dbt_valid_to{deleted} "
        f"from {project.test_schema}.{snapshot}",
        fetch="all",
    )
    runs = sorted({row[3] for row in rows} | {row[4] for row in rows if row[4] is not None})
    rank = {moment: index for index, moment in enumerate(runs)}
    normalised = [
        (row[0], row[1], row[2], rank[row[3]], rank.get(row[4]), *row[5:]) for row in rows
    ]
    return sorted(normalised, key=lambda row: [(value is None, str(value)) for value in row])


def assert_cdf_equals_check(project, modes: tuple[str, ...], step: str) -> None:
    for mode in modes:
        check, cdf = history(project, f"check_{mode}", mode), history(project, f"cdf_{mode}", mode)
        assert cdf == check, f"{step}: cdf_{mode} differs from check_{mode}:\n{cdf}\n{check}"


def snapshot(modes: tuple[str, ...]) -> None:
    results = run_dbt(["snapshot"])
    assert len(results) == 2 * len(modes)


class SnapshotCdfProject:
    modes = HARD_DELETES

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target):
        # the six snapshots of a run at the same time (they share the upstream only)
        return {**dbt_profile_target, "threads": 4}

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshots.yml": _snapshots_yml(self.modes)}


class TestSnapshotCdf(SnapshotCdfProject):
    """Every kind of upstream commit, over five runs: the first; inserts, an update to new
    values, one to the same values, NULLs and deletes; a re-insert and a MERGE of updates and
    inserts; an OPTIMIZE (no data changed); no commit at all. The two modes that detect hard
    deletes (`ignore` is in the random histories)."""

    modes = ("invalidate", "new_record")

    def test_cdf_snapshot_equals_check_and_records_what_it_read(self, project):
        people = Upstream(project)
        people.create({1: ("Ann", "Oslo"), 2: ("Bo", "Lyon"), 3: ("O'Brien", None)})
        snapshot(self.modes)
        assert_cdf_equals_check(project, self.modes, "first run")
        assert newest_commit(project, f"{project.test_schema}.cdf_invalidate")[1] == {
            people.table.lower(): people.version()
        }

        people.insert({4: ("Zoë", "Porto"), 5: ("Ann", None)})
        people.update(1, "Ann", "Porto")
        people.update(2, "Bo", "Lyon")  # the same values: no new version
        people.update(3, None, None)
        people.delete([2, 4])
        snapshot(self.modes)
        assert_cdf_equals_check(project, self.modes, "inserts, updates, NULLs and deletes")

        people.insert({2: ("Bo", "Oslo")})
        people.merge({1: ("Ann", None), 6: ("Ann", "Lyon")})
        snapshot(self.modes)
        assert_cdf_equals_check(project, self.modes, "a re-insert and a MERGE")
        for mode in self.modes:
            assert newest_commit(project, f"{project.test_schema}.cdf_{mode}")[1] == {
                people.table.lower(): people.version()
            }

        project.run_sql(f"optimize {people.table}")
        versions = {
            mode: newest_commit(project, f"{project.test_schema}.cdf_{mode}")[0]
            for mode in self.modes
        }
        snapshot(self.modes)
        assert_cdf_equals_check(project, self.modes, "an OPTIMIZE")
        for mode in self.modes:
            # the version read is recorded (an empty commit), so it is not read again
            assert (
                newest_commit(project, f"{project.test_schema}.cdf_{mode}")[0] == versions[mode] + 1
            )
            assert newest_commit(project, f"{project.test_schema}.cdf_{mode}")[1] == {
                people.table.lower(): people.version()
            }

        versions = {
            mode: newest_commit(project, f"{project.test_schema}.cdf_{mode}")[0]
            for mode in self.modes
        }
        messages = {result.node.name: result.message for result in run_dbt(["snapshot"])}
        for mode in self.modes:
            assert messages[f"cdf_{mode}"] == "OK (no upstream change)"
            assert newest_commit(project, f"{project.test_schema}.cdf_{mode}")[0] == versions[mode]
        assert_cdf_equals_check(project, self.modes, "no commit")

    def test_a_key_the_upstream_lacks_is_named(self, project):
        bad = {
            "snapshots": [
                {
                    "name": "cdf_bad_key",
                    "relation": "source('raw', 'people')",
                    "config": {"unique_key": "person_id", "strategy": "cdf"},
                }
            ]
        }
        write_file(json.dumps(bad), project.project_root, "snapshots", "bad.yml")
        _, output = run_dbt_and_capture(["snapshot", "-s", "cdf_bad_key"], expect_pass=False)
        assert 'unique_key "person_id" is not a column of its upstream' in output
        assert not project.adapter.get_relation(None, project.test_schema, "cdf_bad_key")


@pytest.mark.sequence
class TestSnapshotCdfRandomHistories(SnapshotCdfProject):
    """A seeded random history of the upstream (seed SNAPSHOT_CDF_SEED, named on failure):
    between two runs, zero to three commits of inserts (new keys and deleted ones back),
    updates (new values, the same ones, NULLs), deletes, MERGEs and OPTIMIZEs; after every
    run, cdf equals check in every hard_deletes mode."""

    def test_cdf_snapshot_equals_check_on_random_histories(self, project):
        seed = int(os.environ.get("SNAPSHOT_CDF_SEED") or 20261207)
        draw = random.Random(seed)
        people = Upstream(project)
        people.create({key: _row(draw) for key in range(1, 6)})
        snapshot(self.modes)
        assert_cdf_equals_check(project, self.modes, f"seed {seed}, first run")
        for run in range(1, 6):
            commits = []
            for _ in range(draw.randint(0, 3)):
                commits.append(_random_commit(draw, people))
            snapshot(self.modes)
            assert_cdf_equals_check(project, self.modes, f"seed {seed}, run {run} after {commits}")


def _row(draw: random.Random) -> tuple:
    return (draw.choice(NAMES), draw.choice(CITIES))


def _random_commit(draw: random.Random, people: Upstream) -> str:
    present = sorted(people.rows)
    kind = draw.choice(["insert", "update", "same", "delete", "merge", "optimize"])
    if kind in ("update", "same", "delete") and not present:
        kind = "insert"
    if kind == "insert" and len(present) == 11:
        kind = "same"
    if kind == "insert":
        free = [key for key in range(1, 12) if key not in people.rows]
        people.insert({key: _row(draw) for key in draw.sample(free, min(len(free), 2))})
    elif kind == "update":
        people.update(draw.choice(present), *_row(draw))
    elif kind == "same":
        key = draw.choice(present)
        people.update(key, *people.rows[key])
    elif kind == "delete":
        people.delete(draw.sample(present, min(len(present), draw.randint(1, 2))))
    elif kind == "merge":
        keys = draw.sample(range(1, 10), 3)
        people.merge({key: _row(draw) for key in keys})
    else:
        people.project.run_sql(f"optimize {people.table}")
    return kind
