"""What the cluster engines (``engines.spark``, ``engines.ray``) share: the chunks of complete
users their tasks score (``chunks``), the hash that sends a user to its partition
(``hashing``), and the driver's merge of the tasks' results (``merge``). Spark and Ray never
import each other; both import this."""
