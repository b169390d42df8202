"""dbt's standard adapter test suite on the sparkdelta adapter."""

import pytest

# Every class of the suite: the marker `adapter_suite` (make test-adapter), and no warning for
# dbt-tests-adapter's class-scoped fixtures written as instance methods (pytest 9 deprecation).
SUITE = [
    pytest.mark.adapter_suite,
    pytest.mark.filterwarnings("ignore:Class-scoped fixtures defined as instance methods"),
]
