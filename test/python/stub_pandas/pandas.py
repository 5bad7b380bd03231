"""A stand-in for pandas (which CI cannot install from PyPI): records what to_pandas() builds."""


class DataFrame:
    def __init__(self, rows, columns):
        self.rows = rows
        self.columns = columns
        self.shape = (len(rows), len(columns))

    @classmethod
    def from_records(cls, rows, columns=None):
        return cls(list(rows), list(columns or (rows[0].keys() if rows else [])))
