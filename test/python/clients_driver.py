"""Drives the generated Python client against a running service for test/clients.test.ts.

Reads TMD_URL and TMD_KEY, runs each scenario and prints one JSON object with what it saw.
"""

import json
import os
import sys

from tmd_client import Client, Code, Page, ProblemError, retry_after_seconds

client = Client(os.environ["TMD_URL"], api_key=os.environ["TMD_KEY"])
window = {"from_": "2026-11-01", "to": "2026-11-20", "filters": {"symbol": "AAPL"}}
out = {}

# Paging: every page from the first, with its cursor, until next_cursor is null.
pages = list(client.iter_read_dataset("equities", "stock-prices", limit=5, **window))
out["pages"] = [
    {"count": page.meta["count"], "next_cursor": page.next_cursor, "dates": [row["date"] for row in page.data]}
    for page in pages
]
out["is_page"] = all(isinstance(page, Page) for page in pages)
out["cost_header"] = pages[0].headers.get("x-token-cost")

# The same rows in one read, to compare.
whole = client.read_dataset("equities", "stock-prices", limit=100, **window)
out["whole"] = [row["date"] for row in whole.data]

# A read whose first answer is lost (the test's proxy answers 429 Retry-After: 1): retried, same key.
survived = client.read_dataset("equities", "stock-prices", limit=2, filters={"symbol": "MSFT"})
out["survived"] = {"count": survived.meta["count"], "symbols": sorted({row["symbol"] for row in survived.data})}

# A problem, by code.
try:
    client.read_dataset("equities", "no-such-dataset")
    out["problem"] = None
except ProblemError as error:
    out["problem"] = {
        "code": error.code,
        "is_constant": error.code == Code.DATASET_NOT_FOUND,
        "status": error.status,
        "title": error.title,
        "detail": error.detail,
        "suggestions": error.problem.get("suggestions"),
    }

# to_pandas(): a DataFrame when pandas is installed, a clear ImportError otherwise.
try:
    frame = whole.to_pandas()
    out["pandas"] = {"installed": True, "shape": list(frame.shape), "columns": list(frame.columns)}
except ImportError as error:
    out["pandas"] = {"installed": False, "error": str(error)}

out["retry_after"] = {
    "seconds": retry_after_seconds("7"),
    "date": retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0),
    "past": retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412600.0),
    "junk": retry_after_seconds("soon"),
}
out["python"] = sys.version.split()[0]
print(json.dumps(out))
