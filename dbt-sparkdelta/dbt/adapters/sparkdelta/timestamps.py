"""Query results' TIMESTAMP values as the session shows them.

PySpark's `collect()` (classic and Spark Connect) turns a TIMESTAMP into a naive datetime in the
Python process's local time zone, while Spark SQL (and the Thrift server, which sends text)
shows it in the session's time zone (`spark.sql.session.timeZone`, UTC in the adapter's
sessions). On a machine whose local zone is not the session's, a macro's `run_query` would see
shifted instants (DESCRIBE HISTORY's commit times, a model's timestamps). These functions put
them back into the session's zone, still naive, as on Thrift. TIMESTAMP_NTZ values have no zone
and are left as they are.
"""

from __future__ import annotations

import datetime
import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

SESSION_TIME_ZONE = "spark.sql.session.timeZone"
UTC_NAMES = {"Z", "UTC", "ETC/UTC", "GMT", "ETC/GMT", "UCT", "ETC/UCT", "ZULU", "ETC/ZULU"}

# Spark's zone offsets: (+|-)H[H][:mm[:ss]], optionally after GMT or UTC; Z is UTC.
_OFFSET = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$", re.IGNORECASE)


def session_zone(zone_id: str) -> datetime.tzinfo:
    """The tzinfo of a Spark session time zone: a region (`Europe/Berlin`, `UTC`) or an offset
    (`+02:00`, `GMT-8`, `Z`)."""
    if zone_id.upper() in UTC_NAMES:  # also where Python has no time zone database
        return datetime.UTC
    offset = _OFFSET.match(zone_id)
    if offset:
        sign, hours, minutes, seconds = offset.groups()
        delta = datetime.timedelta(
            hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0)
        )
        return datetime.timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(zone_id)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"Spark's session time zone {zone_id!r} ({SESSION_TIME_ZONE}) is not a zone Python "
            "knows: set it to a region such as Europe/Berlin or an offset such as +02:00, and "
            "where the system has no time zone database, `pip install tzdata`"
        ) from None


def has_timestamps(data_type: Any) -> bool:
    """Whether a Spark schema (or type) holds a TIMESTAMP anywhere."""
    from pyspark.sql.types import ArrayType, MapType, StructType, TimestampType

    if isinstance(data_type, TimestampType):
        return True
    if isinstance(data_type, StructType):
        return any(has_timestamps(field.dataType) for field in data_type.fields)
    if isinstance(data_type, ArrayType):
        return has_timestamps(data_type.elementType)
    if isinstance(data_type, MapType):
        return has_timestamps(data_type.keyType) or has_timestamps(data_type.valueType)
    return False


def as_session_shows(frame: Any, rows: list) -> list:
    """`rows` collected from the DataFrame `frame` (classic or Spark Connect) with every
    TIMESTAMP, also inside structs, arrays and maps, moved from the process's local zone to
    that of the frame's session (asked only when there is a TIMESTAMP)."""
    if not rows:  # before the schema: on Spark Connect, asking for it is a round trip
        return rows
    schema = frame.schema
    if not has_timestamps(schema):
        return rows
    zone = session_zone(frame.sparkSession.conf.get(SESSION_TIME_ZONE))
    return [_convert(row, schema, zone) for row in rows]


def _convert(value: Any, data_type: Any, zone: datetime.tzinfo) -> Any:
    from pyspark.sql import Row
    from pyspark.sql.types import ArrayType, StructType, TimestampType

    if value is None or not has_timestamps(data_type):
        return value
    if isinstance(data_type, TimestampType):
        # A naive datetime is local time to astimezone(), which also honours its DST fold.
        return value.astimezone(zone).replace(tzinfo=None)
    if isinstance(data_type, StructType):
        fields = data_type.fields
        values = [_convert(v, f.dataType, zone) for v, f in zip(value, fields, strict=True)]
        return Row(*(f.name for f in fields))(*values) if isinstance(value, Row) else values
    if isinstance(data_type, ArrayType):
        return [_convert(v, data_type.elementType, zone) for v in value]
    return {
        _convert(k, data_type.keyType, zone): _convert(v, data_type.valueType, zone)
        for k, v in value.items()
    }
