"""Commit audit of every Delta table of this schema, read from the transaction logs."""

from lakehouse.delta.audit import commit_audit


def model(dbt, session):
    # Tagged `audit`: `lakehouse run` builds it after everything else (it has no refs).
    dbt.config(materialized="table", tags=["audit"])
    return commit_audit(session, dbt.this.schema, exclude=(dbt.this.identifier,))
