"""Metadata keys this project reads that the spec leaves unnamed.

§4.2.2: an adapter that meets a block its provider cannot carry drops it, or "fails the
request if marked critical via metadata", without naming the key. turnspec's default is
`metadata.critical`: `true` marks every block of the message, a list of content indexes
marks those blocks. The key is configurable where it is read (`AdapterOptions.critical_key`,
`turnspec conform --critical-key`, `turnspec replay-check --critical-key`, the pytest
plugin's `--turnspec-critical-key`, `AdapterConformanceTests.critical_key`); canonical
validation does not warn TS010 (unknown field) on the default key.
"""

from __future__ import annotations

DEFAULT_CRITICAL_KEY = "critical"
