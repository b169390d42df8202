"""Query results' TIMESTAMPs in the session's time zone, whatever the process's local one: the
conversion of timestamps.py, on values made as PySpark's collect() makes them (no JVM)."""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfoNotFoundError

import pytest
from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from dbt.adapters.sparkdelta.spark_connect import ConnectConnectionWrapper
from dbt.adapters.sparkdelta.timestamps import as_session_shows, session_zone

UTC = datetime.UTC


@pytest.fixture
def los_angeles(monkeypatch):
    """This process's local time zone is America/Los_Angeles for the test."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def collected(instant: datetime.datetime) -> datetime.datetime:
    """A TIMESTAMP as PySpark's collect() gives it: naive, in the process's local zone."""
    return TimestampType().fromInternal(int(instant.timestamp()) * 1_000_000)


def naive_utc(*parts: int) -> datetime.datetime:
    return datetime.datetime(*parts)


def frame(schema: StructType, zone_of: Callable[[str], str], rows: list | None = None) -> Any:
    """A stand-in DataFrame of `schema` whose session answers a setting with `zone_of(key)`."""
    session = SimpleNamespace(conf=SimpleNamespace(get=zone_of))
    return SimpleNamespace(schema=schema, sparkSession=session, collect=lambda: rows)


def test_a_timestamp_comes_back_in_the_session_zone_and_a_timestamp_ntz_as_it_is(los_angeles):
    instant = datetime.datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    schema = StructType([StructField("t", TimestampType()), StructField("n", TimestampNTZType())])
    rows = [Row(t=collected(instant), n=naive_utc(2026, 7, 1, 12, 0)), Row(t=None, n=None)]
    assert rows[0].t == naive_utc(2026, 7, 1, 5, 0)  # what the bug showed: LA's 05:00

    shown = as_session_shows(frame(schema, lambda key: "UTC"), rows)

    assert shown == [Row(t=naive_utc(2026, 7, 1, 12, 0), n=naive_utc(2026, 7, 1, 12, 0)),
                     Row(t=None, n=None)]  # fmt: skip
    assert shown[0].t.tzinfo is None and shown[0].asDict() == {"t": shown[0].t, "n": shown[0].n}
    berlin = as_session_shows(frame(schema, lambda key: "Europe/Berlin"), rows)
    assert berlin[0].t == naive_utc(2026, 7, 1, 14, 0)


def test_the_repeated_hour_of_a_dst_change_keeps_both_instants_apart(los_angeles):
    # 2026-11-01 01:30 happens twice in Los Angeles: 08:30 and 09:30 UTC.
    first = datetime.datetime(2026, 11, 1, 8, 30, tzinfo=UTC)
    second = datetime.datetime(2026, 11, 1, 9, 30, tzinfo=UTC)
    schema = StructType([StructField("t", TimestampType())])
    rows = [Row(t=collected(first)), Row(t=collected(second))]
    assert rows[0].t.replace(fold=0) == rows[1].t.replace(fold=0)  # the same local wall time

    shown = as_session_shows(frame(schema, lambda key: "UTC"), rows)

    assert [r.t for r in shown] == [naive_utc(2026, 11, 1, 8, 30), naive_utc(2026, 11, 1, 9, 30)]


def test_timestamps_inside_structs_arrays_and_maps_are_converted_too(los_angeles):
    instant = datetime.datetime(2026, 1, 15, 18, 45, 30, tzinfo=UTC)
    local = collected(instant)
    schema = StructType([
        StructField("s", StructType([StructField("at", TimestampType()),
                                     StructField("name", StringType())])),
        StructField("a", ArrayType(TimestampType())),
        StructField("m", MapType(StringType(), TimestampType())),
    ])  # fmt: skip
    rows = [Row(s=Row(at=local, name="x"), a=[local, None], m={"k": local})]

    [shown] = as_session_shows(frame(schema, lambda key: "UTC"), rows)

    expected = naive_utc(2026, 1, 15, 18, 45, 30)
    assert shown.s == Row(at=expected, name="x") and shown.s.name == "x"
    assert shown.a == [expected, None]
    assert shown.m == {"k": expected}


def test_rows_without_a_timestamp_are_returned_as_they_are_without_asking_the_zone():
    schema = StructType([StructField("n", TimestampNTZType()), StructField("s", StringType())])
    rows = [Row(n=naive_utc(2026, 1, 1, 0, 0), s="a")]

    def no_question(key: str) -> str:
        raise AssertionError("the session's zone was asked for rows without a TIMESTAMP")

    assert as_session_shows(frame(schema, no_question), rows) is rows


@pytest.mark.parametrize(
    ("zone_id", "offset_hours"),
    [
        ("UTC", 0),
        ("Etc/UTC", 0),
        ("Z", 0),
        ("+02:00", 2),
        ("-03:30", -3.5),
        ("GMT+1", 1),
        ("UTC-08:00", -8),
        ("+05", 5),
    ],  # fmt: skip
)
def test_spark_session_zone_spellings(zone_id, offset_hours):
    at = datetime.datetime(2026, 1, 1)
    assert session_zone(zone_id).utcoffset(at) == datetime.timedelta(hours=offset_hours)


def test_utc_needs_no_time_zone_database(monkeypatch):
    def no_database(key):
        raise ZoneInfoNotFoundError(key)

    monkeypatch.setattr("dbt.adapters.sparkdelta.timestamps.ZoneInfo", no_database)
    assert [session_zone(name) for name in ("UTC", "Etc/UTC", "utc")] == [UTC] * 3
    with pytest.raises(ValueError, match="pip install tzdata"):
        session_zone("Europe/Berlin")


def test_a_region_zone_follows_its_daylight_saving_time():
    berlin = session_zone("Europe/Berlin")
    assert berlin.utcoffset(datetime.datetime(2026, 1, 1)) == datetime.timedelta(hours=1)
    assert berlin.utcoffset(datetime.datetime(2026, 7, 1)) == datetime.timedelta(hours=2)


def test_an_unknown_session_zone_is_named_with_its_setting():
    with pytest.raises(ValueError, match=r"'Mars/Olympus'.*spark\.sql\.session\.timeZone"):
        session_zone("Mars/Olympus")


def test_the_spark_connect_cursor_returns_timestamps_in_the_session_zone(los_angeles):
    """The `connect` method's cursor, on a stand-in session (no server): what its collect()
    gives in the local zone comes back in the zone the session names."""
    instant = datetime.datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    asked: list[str] = []
    result = frame(
        StructType([StructField("t", TimestampType())]),
        lambda key: asked.append(key) or "+02:00",
        rows=[Row(t=collected(instant))],
    )
    session = SimpleNamespace(sql=lambda sql: result)
    cursor = ConnectConnectionWrapper(session, "sc://localhost:1").cursor()
    cursor.execute("select timestamp'2026-07-01 12:00:00' as t")

    assert cursor.fetchall() == [Row(t=naive_utc(2026, 7, 1, 14, 0))]
    assert asked == ["spark.sql.session.timeZone"]
