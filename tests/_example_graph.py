"""Run one TF1 example program unchanged and write the GraphDef of its default graph afterwards (the graph it
trained): ``python _example_graph.py PROGRAM OUT.pb BACKEND``. Under ``tensorflow`` it builds as TF 1.x did
(reference variables and Switch/Merge control flow), so the two backends' graphs can be compared node for node."""
import os
import runpy
import sys

program, out, backend = sys.argv[1:]
if backend == "tensorflow":
    os.environ["EXAMPLE_BACKEND"] = "tensorflow"
    import tensorflow.compat.v1 as tf
    tf.disable_resource_variables()
    tf.disable_control_flow_v2()
else:
    os.environ.pop("EXAMPLE_BACKEND", None)
    from tfevents import core as tf
runpy.run_path(program, run_name="__main__")
with open(out, "wb") as f:
    f.write(tf.get_default_graph().as_graph_def().SerializeToString())
