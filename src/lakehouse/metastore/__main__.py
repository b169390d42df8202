"""`python -m lakehouse.metastore --init-schema`: the child process of `hive.init_schema`."""

import os
import shutil
import sys

from lakehouse.metastore.hive import _init_schema_here

if sys.argv[1:] == ["--init-schema"]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("Java not found: install a JDK 17 or set JAVA_HOME.")
        sys.exit(1)
    sys.exit(_init_schema_here())
