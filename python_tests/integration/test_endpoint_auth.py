"""The endpoint refuses clients that do not authenticate when told to: Thrift with LDAP, checked
against a real LDAP server (Debian's slapd, started here on loopback with one user).

An endpoint that listens beyond loopback must authenticate its clients (docs/deployment.md).
"""

from __future__ import annotations

import pytest

from lakehouse.dbt_runner import DbtRunner, environment
from python_tests import directory
from python_tests.conftest import PROJECT_DIR, endpoint_env, free_port, running_test_endpoint
from python_tests.directory import PEOPLE, start_directory

pytestmark = pytest.mark.auth


@pytest.fixture(scope="module")
def ldap(tmp_path_factory):
    """slapd on a free loopback port with one user, `analyst`, and a random password."""
    if reason := directory.missing():
        pytest.skip(reason)
    found = start_directory(tmp_path_factory.mktemp("ldap"), f"ldap://127.0.0.1:{free_port()}")
    yield found
    found.stop()


@pytest.fixture(scope="module")
def ldap_endpoint(ldap, tmp_path_factory):
    env = endpoint_env(
        tmp_path_factory,
        memory="1g",
        LAKEHOUSE_THRIFT_AUTH="LDAP",
        LAKEHOUSE_LDAP_URL=ldap.url,
        LAKEHOUSE_LDAP_BASE_DN=PEOPLE,
        LAKEHOUSE_THRIFT_USER=ldap.user,
        LAKEHOUSE_THRIFT_PASSWORD=ldap.password,
    )
    with running_test_endpoint(env, timeout=300) as settings:
        yield settings, env


def thrift_query(settings, user: str, password: str | None, auth: str = "LDAP") -> list:
    from pyhive import hive

    connection = hive.connect(
        host="localhost", port=settings.thrift_port, username=user, password=password, auth=auth
    )
    try:
        cursor = connection.cursor()
        cursor.execute("select 1")
        return cursor.fetchall()
    finally:
        connection.close()


def test_thrift_refuses_clients_that_do_not_authenticate(ldap_endpoint, ldap):
    settings, _ = ldap_endpoint
    refused = []
    for user, password, auth in (
        (ldap.user, None, "NONE"),  # no credentials at all
        (ldap.user, "wrong-password", "LDAP"),
        ("mallory", ldap.password, "LDAP"),  # a user the directory does not know
    ):
        with pytest.raises(Exception) as refusal:
            thrift_query(settings, user, password, auth)
        refused.append(f"{user}/{auth}: {type(refusal.value).__name__}")
    print(f"  refused: {refused}")
    assert thrift_query(settings, ldap.user, ldap.password) == [(1,)]


def test_dbt_signs_in_with_the_users_password(ldap_endpoint, tmp_path):
    settings, env = ldap_endpoint
    dbt = DbtRunner(PROJECT_DIR, PROJECT_DIR, work_dir=tmp_path)
    with environment({**env, "LAKEHOUSE_TARGET": "thrift"}):
        shown = dbt.invoke("show", "--inline", "select 41 + 1 as answer", "--output", "json")
        assert shown.result.results[0].agate_table.rows[0]["answer"] == 42
        with environment({"LAKEHOUSE_THRIFT_PASSWORD": "wrong-password"}):
            refused = dbt.invoke("show", "--inline", "select 1", expect_success=False)
    assert not refused.success
