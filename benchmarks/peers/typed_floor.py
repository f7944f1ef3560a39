"""The typed floor: read both files with pyarrow letting every column keep the type it reads
as (numeric ids stay int64; only scores and grades are named), then sort the run by user and
score once. What any evaluator must at least do; ``floor.py`` reads ids as strings."""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from common import args, write

preds_path, truth_path, out = args()


def read(path, columns, types):
    if path.endswith(".parquet"):
        return pq.read_table(path, columns=columns)
    options = pa_csv.ConvertOptions(column_types=types, include_columns=columns)
    return pa_csv.read_csv(path, convert_options=options)


preds = read(preds_path, ["user_id", "item_id", "score"], {"score": pa.float64()})
truth = read(truth_path, ["user_id", "item_id", "relevance"], {"relevance": pa.int64()})
order = pc.sort_indices(preds, sort_keys=[("user_id", "ascending"), ("score", "descending")])
write(out, {"rows": preds.num_rows + truth.num_rows, "sorted": len(order)})
