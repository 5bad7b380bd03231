"""Token-metered data service: a client of the standard library only.

Financial, economic, regulatory and open datasets sold by the read. Every read burns tokens from a
prepaid wallet; cost headers report each charge.

Generated from the OpenAPI document by scripts/clients.ts (npm run clients): do not edit.
"""

from ._runtime import Page, Pages, ProblemError, retry_after_seconds
from .client import Client
from .codes import Code

__version__ = "1.0.0"
__all__ = ["Client", "Code", "Page", "Pages", "ProblemError", "retry_after_seconds"]
