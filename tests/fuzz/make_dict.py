#!/usr/bin/env python3
"""Writes tests/fuzz/onnx.dict, the libFuzzer dictionary of fuzz_compile:
the protobuf keys (field number << 3 | wire type, as varints) of the
fields of onnx.proto that onnx2c reads (ModelProto, GraphProto, NodeProto,
TensorProto, AttributeProto, ValueInfoProto, TypeProto and its parts,
OperatorSetIdProto, FunctionProto), the packed form of repeated numbers,
interesting varints (dims such as 0, -1, 2^31, 2^40, 2^62), and op names,
alone and as a NodeProto op_type field (key, length, name).

Usage: make_dict.py [OUT]   (default: tests/fuzz/onnx.dict beside this file)"""
import os, sys

# (message, field, number, wire type); 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
FIELDS = [
    ("ModelProto", "ir_version", 1, 0), ("ModelProto", "opset_import", 8, 2), ("ModelProto", "producer_name", 2, 2),
    ("ModelProto", "producer_version", 3, 2), ("ModelProto", "domain", 4, 2), ("ModelProto", "model_version", 5, 0),
    ("ModelProto", "doc_string", 6, 2), ("ModelProto", "graph", 7, 2), ("ModelProto", "metadata_props", 14, 2),
    ("ModelProto", "training_info", 20, 2), ("ModelProto", "functions", 25, 2),
    ("GraphProto", "node", 1, 2), ("GraphProto", "name", 2, 2), ("GraphProto", "initializer", 5, 2),
    ("GraphProto", "sparse_initializer", 15, 2), ("GraphProto", "doc_string", 10, 2), ("GraphProto", "input", 11, 2),
    ("GraphProto", "output", 12, 2), ("GraphProto", "value_info", 13, 2),
    ("GraphProto", "quantization_annotation", 14, 2),
    ("NodeProto", "input", 1, 2), ("NodeProto", "output", 2, 2), ("NodeProto", "name", 3, 2),
    ("NodeProto", "op_type", 4, 2), ("NodeProto", "domain", 7, 2), ("NodeProto", "overload", 8, 2),
    ("NodeProto", "attribute", 5, 2), ("NodeProto", "doc_string", 6, 2),
    ("AttributeProto", "name", 1, 2), ("AttributeProto", "ref_attr_name", 21, 2), ("AttributeProto", "type", 20, 0),
    ("AttributeProto", "f", 2, 5), ("AttributeProto", "i", 3, 0), ("AttributeProto", "s", 4, 2),
    ("AttributeProto", "t", 5, 2), ("AttributeProto", "g", 6, 2), ("AttributeProto", "sparse_tensor", 22, 2),
    ("AttributeProto", "tp", 14, 2), ("AttributeProto", "floats", 7, 5), ("AttributeProto", "floats_packed", 7, 2),
    ("AttributeProto", "ints", 8, 0), ("AttributeProto", "ints_packed", 8, 2), ("AttributeProto", "strings", 9, 2),
    ("AttributeProto", "tensors", 10, 2), ("AttributeProto", "graphs", 11, 2),
    ("AttributeProto", "sparse_tensors", 23, 2), ("AttributeProto", "type_protos", 15, 2),
    ("TensorProto", "dims", 1, 0), ("TensorProto", "dims_packed", 1, 2), ("TensorProto", "data_type", 2, 0),
    ("TensorProto", "segment", 3, 2), ("TensorProto", "float_data", 4, 5), ("TensorProto", "float_data_packed", 4, 2),
    ("TensorProto", "int32_data", 5, 0), ("TensorProto", "int32_data_packed", 5, 2),
    ("TensorProto", "string_data", 6, 2), ("TensorProto", "int64_data", 7, 0),
    ("TensorProto", "int64_data_packed", 7, 2), ("TensorProto", "name", 8, 2), ("TensorProto", "raw_data", 9, 2),
    ("TensorProto", "double_data", 10, 1), ("TensorProto", "double_data_packed", 10, 2),
    ("TensorProto", "uint64_data", 11, 0), ("TensorProto", "uint64_data_packed", 11, 2),
    ("TensorProto", "external_data", 13, 2), ("TensorProto", "data_location", 14, 0),
    ("ValueInfoProto", "name", 1, 2), ("ValueInfoProto", "type", 2, 2), ("ValueInfoProto", "doc_string", 3, 2),
    ("TypeProto", "tensor_type", 1, 2), ("TypeProto", "sequence_type", 4, 2), ("TypeProto", "map_type", 5, 2),
    ("TypeProto", "optional_type", 9, 2), ("TypeProto", "sparse_tensor_type", 8, 2),
    ("TypeProto", "denotation", 6, 2),
    ("TypeProto.Tensor", "elem_type", 1, 0), ("TypeProto.Tensor", "shape", 2, 2),
    ("TypeProto.Sequence", "elem_type", 1, 2), ("TypeProto.Optional", "elem_type", 1, 2),
    ("TensorShapeProto", "dim", 1, 2), ("TensorShapeProto.Dimension", "dim_value", 1, 0),
    ("TensorShapeProto.Dimension", "dim_param", 2, 2),
    ("OperatorSetIdProto", "domain", 1, 2), ("OperatorSetIdProto", "version", 2, 0),
    ("FunctionProto", "name", 1, 2), ("FunctionProto", "input", 4, 2), ("FunctionProto", "output", 5, 2),
    ("FunctionProto", "attribute", 6, 2), ("FunctionProto", "node", 7, 2), ("FunctionProto", "opset_import", 9, 2),
    ("FunctionProto", "domain", 10, 2),
]

OPS = """Abs Add And ArgMax AveragePool BatchNormalization Cast CastLike Ceil Clip Compress Concat
ConcatFromSequence Constant ConstantOfShape Conv ConvTranspose CumSum DepthToSpace DequantizeLinear Div
Dropout Einsum Equal Erf Exp Expand EyeLike Flatten Gather GatherElements GatherND Gemm GlobalAveragePool
GRU HardSigmoid Identity If InstanceNormalization LayerNormalization LeakyRelu Less Log Loop LRN LSTM
MatMul MatMulInteger Max MaxPool Mean Min Mod Mul Neg NonZero Not OneHot Pad Pow QLinearConv
QLinearMatMul QuantizeLinear Range Reciprocal ReduceMax ReduceMean ReduceSum Relu Reshape Resize RNN
Scan ScatterElements ScatterND SequenceAt SequenceConstruct Shape Sigmoid Sign Size Slice Softmax
SpaceToDepth Split SplitToSequence Sqrt Squeeze STFT Sub Sum Tanh Tile TopK Transpose Trilu Unique
Unsqueeze Where Xor DFT GridSample RoiAlign NonMaxSuppression Attention RotaryEmbedding
TreeEnsemble Col2Im CenterCropPad StringNormalizer ImageDecoder Optional OptionalGetElement""".split()

DOMAINS = ["ai.onnx", "ai.onnx.ml", "com.microsoft"]
ATTRS = """axis axes perm keepdims kernel_shape strides pads dilations group auto_pad to value alpha beta
epsilon transA transB mode split then_branch else_branch body direction hidden_size""".split()


def varint(v):
    v &= (1 << 64) - 1
    b = bytearray()
    while True:
        x = v & 0x7F
        v >>= 7
        if v:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def esc(b):
    return "".join("\\x%02x" % c for c in b)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx.dict")
    lines = ["# libFuzzer dictionary for fuzz_compile (written by tests/fuzz/make_dict.py; do not edit)", ""]
    lines.append("# protobuf keys: field number << 3 | wire type")
    for msg, field, num, wt in FIELDS:
        lines.append('%s_%s="%s"' % (msg.replace(".", "_"), field, esc(varint(num << 3 | wt))))
    lines.append("")
    lines.append("# varints: dims and attribute values")
    for v in (0, 1, 2, 3, 127, 128, 255, 65535, -1, -2, 2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -(2**63)):
        lines.append('varint_%s="%s"' % (str(v).replace("-", "m"), esc(varint(v))))
        lines.append('dim_value_%s="%s"' % (str(v).replace("-", "m"), esc(b"\x08" + varint(v))))
    lines.append("")
    lines.append("# op names, alone and as NodeProto.op_type; domains; attribute names")
    for op in OPS:
        lines.append('op_%s="%s"' % (op, op))
        lines.append('op_type_%s="%s"' % (op, esc(b"\x22" + varint(len(op)) + op.encode())))
    for d in DOMAINS:
        lines.append('domain_%s="%s"' % (d.replace(".", "_"), esc(b"\x3a" + varint(len(d)) + d.encode())))
    for a in ATTRS:
        lines.append('attr_%s="%s"' % (a, esc(b"\x0a" + varint(len(a)) + a.encode())))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
