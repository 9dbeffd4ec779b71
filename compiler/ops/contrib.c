/* com.microsoft contrib ops that onnxruntime's transformer optimizer writes
 * (its quantization tools' QLinear* ops are in ops/quant.c): QuickGelu,
 * BiasGelu, FastGelu, SkipLayerNormalization, FusedConv, FusedMatMul. They
 * are lowered onto the standard ops' kernels: the elementwise kernels of
 * ops.def, LayerNormalization's, MatMul's (FusedMatMul: its transposes and
 * alpha as the product's parameters); FusedConv is expanded into onnx2c's
 * own FusedConv (a Conv with an activation and a residual added before it,
 * which is what com.microsoft's FusedConv is) by its OpDef.expand hook. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"

void infer_layernorm(Node *n);
void lower_layernorm(Node *n, Lowering *L);

/* ---- QuickGelu: x * sigmoid(alpha x) (ops.def's Swish kernel) ---------------- */

void infer_quick_gelu(Node *n)
{
    need_dtype(n, n->in[0], DTS_FLOAT);
    out_like(n, 0, n->in[0]);
}

void lower_quick_gelu(Node *n, Lowering *L)
{
    KCall *c = ew_unary_call(L, "Swish", n->in[0], n->out[0]);
    c->f[O2C_EW_FA] = attr_f(n, "alpha");
}

/* ---- BiasGelu: gelu(A + B) (erf); FastGelu: gelu(X + bias) (tanh form) ------- */

void infer_bias_gelu(Node *n)
{
    Tensor *a = n->in[0], *b = in_t(n, 1);
    need_dtype(n, a, DTS_FLOAT);
    if (b) {
        int64_t dims[MAX_RANK];
        if (b->dtype != a->dtype) fail("the bias must have the input's type");
        int r = broadcast_shapes(n, a, b, dims);
        if (r != a->rank || memcmp(dims, a->dims, sizeof(int64_t) * (size_t)r))
            fail("the bias (%s) must broadcast to the input's shape (%s)", tensor_shape_str(b), tensor_shape_str(a));
    }
    out_like(n, 0, a);
}

void lower_bias_gelu(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *b = in_t(n, 1), *y = n->out[0];
    if (b) {
        ew_binary_call(L, "Add", x, b, y);   /* then the activation in place */
        x = y;
    }
    ew_unary_call(L, !strcmp(n->op_type, "FastGelu") ? "GeluTanh" : "GeluErf", x, y);
}

/* ---- SkipLayerNormalization ---------------------------------------------------- */
/* s = input + skip (+ bias); output = LayerNorm(s) * gamma + beta over the last
 * axis; outputs 1, 2: mean and inverse standard deviation; 3: s itself. */


static void skip_layernorm_node(Node *n, Node *ln, Tensor **in, Tensor *s)
{
    *ln = *n;
    ln->op = node_op(n, "", "LayerNormalization");
    in[0] = s;
    in[1] = n->in[2];
    in[2] = in_t(n, 3);
    ln->in = in;
    ln->nin = 3;
    ln->nout = n->nout < 3 ? n->nout : 3;
}

void infer_skip_layernorm(Node *n)
{
    Tensor *x = n->in[0], *skip = n->in[1];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 2) fail("input '%s' must have rank 2 or more, it is %s", x->name, tensor_shape_str(x));
    int64_t h = x->dims[x->rank - 1], dims[MAX_RANK];
    int r = broadcast_shapes(n, x, skip, dims);
    if (r != x->rank || memcmp(dims, x->dims, sizeof(int64_t) * (size_t)r) || skip->dtype != x->dtype)
        fail("skip ('%s', %s) must have the input's type and broadcast to its shape (%s)", skip->name,
             tensor_shape_str(skip), tensor_shape_str(x));
    for (int j = 2; j < n->nin; j++)
        if (n->in[j] && j != 1 && (tensor_numel(n->in[j]) != h || n->in[j]->dtype != x->dtype))
            fail("'%s' (%s) must hold one %s value per hidden unit (%lld)", n->in[j]->name,
                 tensor_shape_str(n->in[j]), dtype_name(x->dtype), (long long)h);
    /* the statistics' shapes: LayerNormalization's over the last axis */
    Node ln;
    Tensor *in[3], sum = *x;
    Tensor *out3 = n->nout > 3 ? n->out[3] : NULL;
    if (!attr_has(n, "epsilon")) node_set_attr_f(n, "epsilon", 1e-12);   /* onnxruntime's default */
    skip_layernorm_node(n, &ln, in, &sum);
    infer_layernorm(&ln);
    if (out3) out_like(n, 3, x);
}

void lower_skip_layernorm(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *bias = in_t(n, 4);
    Tensor *s = n->nout > 3 && n->out[3] && (n->out[3]->nuses > 0 || n->out[3]->is_output)
                    ? n->out[3] : lower_temp(L, x->dtype, x->rank, x->dims);
    ew_binary_call(L, "Add", x, n->in[1], s);
    if (bias) ew_binary_call(L, "Add", s, bias, s);
    Node ln;
    Tensor *in[3];
    skip_layernorm_node(n, &ln, in, s);
    lower_layernorm(&ln, L);
}

/* ---- FusedConv: onnx2c's FusedConv (residual before the activation) ------------ */

/* expanded at inference (the op's OpDef.expand): the node becomes onnx2c's
 * FusedConv, which the engine's inference loop then infers */
int expand_ms_fused_conv(Graph *g, Node *n)
{
    (void)g;
    static const char *const ACTS[] = {"Relu", "Tanh", "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid", NULL};
    const char *act = attr_has(n, "activation") ? attr_s(n, "activation") : "";
    const double *par = NULL;
    int np = attr_floats(n, "activation_params", &par);
    int known = !*act;
    for (int i = 0; ACTS[i]; i++) known |= !strcmp(act, ACTS[i]);
    if (!known) fail("activation '%s' is not supported (onnx2c knows Relu Tanh Sigmoid LeakyRelu Clip HardSigmoid)", act);
    int need = !strcmp(act, "LeakyRelu") ? 1 : !strcmp(act, "Clip") || !strcmp(act, "HardSigmoid") ? 2 : 0;
    if (np < need) fail("activation %s needs %d activation_params, the node has %d", act, need, np);
    /* the node becomes onnx2c's FusedConv: the same inputs (X, W, B, Z as the
     * residual), the Conv attributes, the activation and its parameters */
    const OpDef *op = node_op(n, "onnx2c", "FusedConv");
    Node tmp = *n;
    n->op = op;
    n->domain = "onnx2c";
    n->attrs = NULL;
    n->nattrs = 0;
    static const char *const CONV_ATTRS[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
    for (int i = 0; CONV_ATTRS[i]; i++) {
        const Attr *a = attr_find(&tmp, CONV_ATTRS[i]);
        if (!a) continue;
        if (a->type == AT_STRING) node_set_attr_s(n, a->name, a->s);
        else if (a->type == AT_INT) node_set_attr_i(n, a->name, a->i);
        else if (a->type == AT_INTS) node_set_attr_ints(n, a->name, a->ints, a->n);
    }
    node_set_attr_s(n, "activation", *act ? act : "none");
    if (need >= 1) node_set_attr_f(n, "activation_alpha", par[0]);
    if (need >= 2) node_set_attr_f(n, "activation_beta", par[1]);
    node_set_attr_s(n, "residual", in_t(n, 3) ? "before" : "none");
    return 1;
}

/* ---- FusedMatMul: alpha * op(A) op(B), op a transpose of the last two axes ----- */

void infer_ms_fused_matmul(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1];
    need_dtype(n, a, DTS_FLOAT);
    if (b->dtype != a->dtype) fail("A and B must have the same data type");
    if (attr_i(n, "transBatchA") || attr_i(n, "transBatchB"))
        fail("transBatchA/transBatchB are not supported yet");
    if (a->rank < 2 || b->rank < 2) fail("FusedMatMul needs inputs of rank 2 or more");
    int ta = attr_i(n, "transA") != 0, tb = attr_i(n, "transB") != 0;
    int64_t M = a->dims[a->rank - 2 + ta], K = a->dims[a->rank - 1 - ta];
    int64_t Kb = b->dims[b->rank - 2 + tb], N = b->dims[b->rank - 1 - tb];
    if (K != Kb)
        fail("inconsistent shapes: A is %s (transA=%d) and B is %s (transB=%d)", tensor_shape_str(a), ta,
             tensor_shape_str(b), tb);
    Tensor ba = *a, bb = *b;
    ba.rank = a->rank - 2;
    bb.rank = b->rank - 2;
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, &ba, &bb, dims);
    dims[r++] = M;
    dims[r++] = N;
    set_out(n, 0, a->dtype, r, dims);
}

/* MatMul's lowering with the transposes and alpha (ops/matmul.c): the
 * tiled, packed and tuned variants as for a MatMul */
void lower_ms_fused_matmul(Node *n, Lowering *L)
{
    lower_product_call(n, L, attr_i(n, "transA") != 0, attr_i(n, "transB") != 0, attr_f(n, "alpha"));
}

/* FusedConv is always expanded first */
void infer_ms_expanded(Node *n) { fail("internal: com.microsoft %s was not expanded", n->op_type); }
void lower_ms_expanded(Node *n, Lowering *L) { (void)L; fail("internal: com.microsoft %s was not expanded", n->op_type); }
