#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed onnx package as a
folder of test_* dirs (model.onnx, test_data_set_N/{input,output}_K.pb).

onnx stopped shipping the serialized node tests in 2026; its package still
holds the generator scripts (onnx.backend.test.case.node), which build every
case in memory. This script runs them and writes each case the way the old
corpus laid it out: a tensor as a TensorProto, a sequence as a SequenceProto,
an optional as an OptionalProto. The case's own tolerances (some tests set
looser rtol/atol than the default) go into tolerance.txt beside model.onnx.

Usage: make_corpus.py OUT_DIR     (skips the work when OUT_DIR/.stamp holds
the installed versions of onnx, numpy and ml_dtypes: the expected outputs
are computed by onnx's reference with them; ml_dtypes 0.7 turned float ->
int4/int2 casts out of range into 0, where 0.5 wraps as onnxruntime does,
so tests/requirements.txt pins it)"""
import os, shutil, sys, warnings

import numpy as np
import onnx
from onnx import numpy_helper


def value_proto(v, name):
    if isinstance(v, dict):
        return numpy_helper.from_dict(v, name)
    if isinstance(v, list):
        return numpy_helper.from_list(v, name)
    if v is None:
        return numpy_helper.from_optional(None, name)
    if isinstance(v, (onnx.TensorProto, onnx.SequenceProto, onnx.OptionalProto)):
        return v
    return numpy_helper.from_array(np.asarray(v), name)


def write_case(case, out):
    d = os.path.join(out, case.name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    with open(os.path.join(d, "tolerance.txt"), "w") as f:
        f.write("rtol %r\natol %r\n" % (float(case.rtol), float(case.atol)))
    g = case.model.graph
    for k, (ins, outs) in enumerate(case.data_sets):
        ds = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(ds, exist_ok=True)
        for kind, vals, infos in (("input", ins, g.input), ("output", outs, g.output)):
            for j, v in enumerate(vals):
                name = infos[j].name if j < len(infos) else ""
                with open(os.path.join(ds, "%s_%d.pb" % (kind, j)), "wb") as f:
                    f.write(value_proto(v, name).SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    stamp = os.path.join(out, ".stamp")
    import ml_dtypes
    versions = "onnx %s numpy %s ml_dtypes %s" % (onnx.__version__, np.__version__, ml_dtypes.__version__)
    if os.path.exists(stamp) and open(stamp).read().strip() == versions:
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases(None) if c.kind == "node"]
    for c in cases:
        write_case(c, out)
    with open(stamp, "w") as f:
        f.write(versions + "\n")
    print("# wrote %d node tests of %s to %s" % (len(cases), versions, out))


if __name__ == "__main__":
    main()
