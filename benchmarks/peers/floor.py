"""The floor: read both files with pyarrow (typed columns) and sort the run once."""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from common import args, write

preds_path, truth_path, out = args()


def read(path, types):
    if path.endswith(".parquet"):
        return pq.read_table(path, columns=list(types))
    options = pa_csv.ConvertOptions(column_types=types, include_columns=list(types))
    return pa_csv.read_csv(path, convert_options=options)


preds = read(preds_path, {"user_id": pa.string(), "item_id": pa.string(), "score": pa.float64()})
truth = read(truth_path, {"user_id": pa.string(), "item_id": pa.string(), "relevance": pa.int64()})
order = pc.sort_indices(preds, sort_keys=[("user_id", "ascending"), ("score", "descending")])
write(out, {"rows": preds.num_rows + truth.num_rows, "sorted": len(order)})
