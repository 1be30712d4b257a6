"""Chrome trace format (``chrome://tracing``, Perfetto) of a ``StepStats``, as TF1's ``timeline.Timeline`` writes
it for ``ProfilerHook``: one process per device, one complete ("X") event per node execution."""
from __future__ import annotations

import json
from typing import Any


def chrome_trace(step_stats: Any, show_dataflow: bool = True, show_memory: bool = False) -> str:
    """A Chrome trace (``chrome://tracing`` JSON) of ``step_stats``: one process per device, one complete
    ("X") event per node execution, named by op type with the node name and inputs in ``args``; ``show_memory`` adds a tensor
    snapshot ("O") per output. ``show_dataflow`` is accepted for TF's signature; flow arrows are not drawn."""
    events: list = []
    for pid, dev in enumerate(step_stats.dev_stats):
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "%s Compute" % dev.device}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
        for ns in dev.node_stats:
            label = ns.timeline_label
            op_type, inputs = ns.node_name, []
            if " = " in label and "(" in label:
                op_type = label.split(" = ", 1)[1].split("(", 1)[0]
                inside = label[label.index("(") + 1:label.rindex(")")]
                inputs = [s for s in inside.split(", ") if s]
            args = {"name": ns.node_name, "op": op_type}
            for i, name in enumerate(inputs):
                args["input%d" % i] = name
            events.append({"ph": "X", "cat": "Op", "name": op_type, "pid": pid, "tid": ns.thread_id,
                           "ts": ns.all_start_micros, "dur": max(ns.all_end_rel_micros, 0), "args": args})
            if show_memory:
                for out in ns.output:
                    events.append({"ph": "O", "cat": "Tensor", "name": "%s:%d" % (ns.node_name, out.slot),
                                   "pid": pid, "id": "%s:%d" % (ns.node_name, out.slot),
                                   "ts": ns.all_start_micros + ns.all_end_rel_micros,
                                   "args": {"snapshot": {"tensor_description": str(out.tensor_description)}}})
    return json.dumps({"traceEvents": events}, indent=4, separators=(",", ": "))
