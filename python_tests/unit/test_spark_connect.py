"""The `connect` method's pure parts: profile validation, URLs and tokens, error messages."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.credentials import SparkDeltaConnectionMethod, SparkDeltaCredentials
from dbt.adapters.sparkdelta.errors import (
    connect_error_message,
    open_error_message,
    without_jvm_stack,
)
from dbt.adapters.sparkdelta.spark_connect import (
    ConnectUrlError,
    redact,
    split_url,
    url_host,
    with_token,
)
from lakehouse.endpoint import CONNECT_TOKEN_ENV, EndpointSettings
from lakehouse.settings import session_settings


def credentials(**fields) -> SparkDeltaCredentials:
    data = {"method": "connect", "schema": "s", **fields}
    SparkDeltaCredentials.validate(data)
    return SparkDeltaCredentials.from_dict(data)


def test_connect_is_a_method_and_compares_as_a_string():
    creds = credentials(spark_connect_url="sc://spark.example:15002")
    assert creds.method == SparkDeltaConnectionMethod.CONNECT == "connect"
    assert creds.host == "spark.example"  # dbt-spark's unique_field and `host` need it
    # dbt-spark's own checks compare with its enum: the shared values still match.
    from dbt.adapters.spark.connections import SparkConnectionMethod

    assert credentials(method="session").method == SparkConnectionMethod.SESSION


def test_a_typo_in_method_is_refused_naming_the_valid_ones():
    with pytest.raises(Exception, match=r"'conect' is not one of .*'session', 'connect'"):
        SparkDeltaCredentials.validate({"method": "conect", "schema": "s", "host": "h"})


def test_url_from_host_and_port_and_token_and_tls():
    creds = credentials(host="h", port=15002, token="t0k", use_ssl=True)
    assert creds.connect_url() == "sc://h:15002/;use_ssl=true;token=t0k"
    assert credentials(host="h", port=15002, token="").connect_url() == "sc://h:15002"


def test_connect_needs_an_endpoint_and_a_spark_connect_url():
    with pytest.raises(DbtRuntimeError, match="spark_connect_url: sc://host:15002"):
        credentials()
    with pytest.raises(DbtRuntimeError, match="is not a Spark Connect URL"):
        credentials(spark_connect_url="http://h:15002")


def test_the_thrift_method_passes_the_token_to_python_models_but_not_its_tls():
    creds = SparkDeltaCredentials.from_dict(
        {"method": "thrift", "schema": "s", "host": "h", "port": 10000, "use_ssl": True,
         "token": "t0k", "spark_connect_url": "sc://h:15002"}
    )  # fmt: skip
    assert creds.connect_url() == "sc://h:15002/;token=t0k"


def test_url_parameters_and_redaction():
    assert split_url("sc://h:1/;a=1;token=x") == ("sc://h:1", {"a": "1", "token": "x"})
    assert with_token("sc://h:1/;token=mine", "other") == "sc://h:1/;token=mine"
    assert redact("sc://h:1/;token=secret;user_id=u") == "sc://h:1/;token=***;user_id=u"
    assert redact("sc://h:1") == "sc://h:1"
    assert url_host("sc://localhost:15002/;token=x") == "localhost"
    with pytest.raises(ConnectUrlError, match="no '=value'"):
        split_url("sc://h:1/;token")


def test_refused_token_message_names_the_setting():
    grpc = 'status = StatusCode.UNAUTHENTICATED\n\tdetails = "No authentication token provided"'
    message = connect_error_message(grpc, "sc://h:1", token_set=False)
    assert "refused the client: it sent no token" in message
    assert "`token`" in message and "spark.connect.authenticate.token" in message
    assert "No authentication token provided" in message
    bad = connect_error_message("Invalid authentication token", "sc://h:1", token_set=True)
    assert "it sent an invalid token" in bad


@pytest.mark.parametrize(
    "cause",
    [
        'status = StatusCode.UNAVAILABLE\n\tdetails = "failed to connect to all addresses"',
        "[INVALID_HANDLE.SESSION_CHANGED] The existing Spark server driver instance has restarted",
    ],
)
def test_lost_endpoint_message_names_the_url_and_what_to_do(cause):
    message = connect_error_message(cause, "sc://h:15002", token_set=False)
    assert message.startswith("Lost the connection to the Spark Connect endpoint sc://h:15002")
    assert "Check that the endpoint is up and rerun" in message


def test_other_errors_pass_unchanged_without_the_server_stack():
    error = (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`t` cannot be found.\n\n"
        "JVM stacktrace:\norg.apache.spark.sql.catalyst.ExtendedAnalysisException: [TABLE...]\n"
        "\tat org.apache.spark.sql.Foo.bar(Foo.scala:1)"
    )
    cleaned = without_jvm_stack(connect_error_message(error, "sc://h:1", token_set=False))
    assert cleaned == "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`t` cannot be found."


def test_endpoint_token_only_from_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(CONNECT_TOKEN_ENV, "")  # Spark would then demand an (empty) token
    monkeypatch.delenv("LAKEHOUSE_CONNECT_TOKEN", raising=False)
    plain = EndpointSettings(session=session_settings())
    assert CONNECT_TOKEN_ENV not in plain.process_env()
    monkeypatch.setenv("LAKEHOUSE_CONNECT_TOKEN", "t0k")
    settings = EndpointSettings.from_env()
    assert settings.process_env()[CONNECT_TOKEN_ENV] == "t0k"
    assert "t0k" not in repr(settings)
    from lakehouse.endpoint import spark_submit_command

    assert not any("t0k" in part for part in spark_submit_command(settings))


def test_an_unreachable_endpoint_names_the_timeout_and_tls_with_a_token():
    creds = credentials(spark_connect_url="sc://spark.example:15002", token="t0k")
    message = open_error_message(
        "[RETRIES_EXCEEDED] The maximum number of retries has been exceeded.",
        creds,
        creds.connect_url(),
    )
    assert message.startswith(
        "Could not reach the Spark Connect endpoint sc://spark.example:15002/;token=*** "
        "within connect_timeout=10s"
    )
    assert "TLS" in message and "t0k" not in message
    local = credentials(spark_connect_url="sc://localhost:15002")
    assert "TLS" not in open_error_message("RETRIES_EXCEEDED", local, local.connect_url())


def test_remote_sessions_do_without_deltas_metadata_only_min_max_unless_the_profile_says():
    setting = "spark.databricks.delta.optimizeMetadataQuery.enabled"
    assert credentials(host="h").server_side_parameters[setting] == "false"
    thrift = credentials(method="thrift", host="h", port=10000, user="u")
    assert thrift.server_side_parameters[setting] == "false"
    assert setting not in credentials(method="session").server_side_parameters
    chosen = credentials(host="h", server_side_parameters={setting: "true"})
    assert chosen.server_side_parameters[setting] == "true"
